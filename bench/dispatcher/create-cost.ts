// What one SparkApplication create costs the real API server, by object shape (issue 14,
// point 5: is the object's size what makes the real server 7–10× the fake?). Run against the
// local control plane (bash deploy/local/k8s.sh up):
//   node bench/dispatcher/create-cost.ts [creates per batch] [rounds]
// Each create is a server-side dry run (`dryRun=All`): authentication, RBAC, the CRD's
// structural-schema decoding, pruning, defaulting and validation, admission, managedFields — all
// but the etcd write and the watch fan-out. So nothing is stored, the Spark operator never sees
// an object, and parallel tests on the shared control plane are not disturbed beyond CPU. The
// shapes alternate batch by batch, so load from other processes falls on each alike; the API
// server's CPU is read from /proc around every batch.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { adminKubeConfig } from '@icepack/test';
import { sampleMergeTask, sampleTableId } from '@icepack/types';
import { applicationShapes } from '@icepack/dispatcher/testing';
import { controlPlanePid, machineBlock, processCpuMs } from './api-server.ts';

const perBatch = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 5);
const SPARK_API = {
  group: 'sparkoperator.k8s.io',
  version: 'v1beta2',
  plural: 'sparkapplications',
};
const namespace = 'default';

const pid = controlPlanePid('kube-apiserver');
const apiCpuMs = (): number => processCpuMs(pid);

const api = adminKubeConfig().makeApiClient(CustomObjectsApi);
const task = sampleMergeTask({
  table: sampleTableId({ catalog: 'benchc0', namespace: ['bench'], name: 't1' }),
});
const shapes = applicationShapes(task, namespace);
const totals = new Map<string, { cpuMs: number; wallMs: number; creates: number }>();

for (let round = 0; round < rounds; round += 1) {
  for (const [shape, make] of Object.entries(shapes)) {
    const cpu0 = apiCpuMs();
    const t0 = Date.now();
    // 4 in flight, as a few catalogs' workers would have.
    for (let i = 0; i < perBatch; i += 4) {
      await Promise.all(
        [0, 1, 2, 3].map((j) =>
          api.createNamespacedCustomObject({
            ...SPARK_API,
            namespace,
            body: make(`cc-${String(round)}-${String(i + j)}`),
            dryRun: 'All',
          }),
        ),
      );
    }
    const total = totals.get(shape) ?? { cpuMs: 0, wallMs: 0, creates: 0 };
    total.cpuMs += apiCpuMs() - cpu0;
    total.wallMs += Date.now() - t0;
    total.creates += perBatch;
    totals.set(shape, total);
  }
}

const size = (shape: string): number => JSON.stringify(shapes[shape]!('cc-0-0')).length;
console.log(
  [
    '# SparkApplication create (dry run) on the real API server, by shape',
    '',
    ...machineBlock(),
    '',
    `${String(rounds)} rounds × ${String(perBatch)} creates per shape, shapes alternating, 4 in flight`,
    '',
    '| shape | JSON bytes | API server CPU per create | wall per create |',
    '|---|---|---|---|',
    ...[...totals].map(
      ([shape, t]) =>
        `| ${shape} | ${String(size(shape))} | ${(t.cpuMs / t.creates).toFixed(2)} ms | ${(t.wallMs / t.creates).toFixed(2)} ms |`,
    ),
  ].join('\n'),
);
