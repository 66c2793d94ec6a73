// Runs the fake Kubernetes API server on its own, for the local stack:
//   node test/src/k8s/main.ts --port 16443 [--token T] [--node name=cpu,memory ...]
// Prints the URL on stdout and serves until SIGINT/SIGTERM.
import { parseArgs } from 'node:util';
import { startFakeKubeApi } from './fake-kube-api.ts';
import type { NodeSpec } from './object-store.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    token: { type: 'string' },
    node: { type: 'string', multiple: true },
  },
});

function parseNode(text: string): NodeSpec {
  const match = /^([^=]+)=([^,]+),(.+)$/.exec(text);
  if (match === null)
    throw new Error(`--node expects name=cpu,memory (e.g. node-1=8,32Gi), got ${text}`);
  const [, name = '', cpu = '', memory = ''] = match;
  return { name, cpu, memory };
}

const api = await startFakeKubeApi({
  port: Number(values.port),
  host: values.host,
  ...(values.token === undefined ? {} : { token: values.token }),
  ...(values.node === undefined ? {} : { nodes: values.node.map(parseNode) }),
});
console.log(api.url);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void api.stop().then(() => process.exit(0));
  });
}
