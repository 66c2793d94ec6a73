import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { request, type RequestOptions } from 'node:https';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { infraEnv, type KubeEnv } from '../infra/env.ts';
import { freePort } from '../infra/free-port.ts';
import { adminKubeConfig } from './control-plane.ts';

/** A second kube-apiserver on the local control plane's etcd: an HA peer of the shared one. */
export interface SecondApiServer {
  /** `https://127.0.0.1:<port>` */
  readonly url: string;
  /** The admin KubeConfig pointed at this server. */
  readonly admin: KubeConfig;
  /** SIGTERM, then waits for the process to end. */
  stop(): Promise<void>;
}

async function readyz(kc: KubeConfig): Promise<boolean> {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) return false;
  const options: RequestOptions = { method: 'GET', timeout: 5_000 };
  await kc.applyToHTTPSOptions(options);
  return new Promise((answer) => {
    const req = request(new URL('/readyz', cluster.server), options, (res) => {
      res.resume();
      answer(res.statusCode === 200);
    });
    req.on('error', () => answer(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/**
 * Starts another kube-apiserver with the very flags of the running one (read from its
 * process), on a free port: the same etcd, certificates, tokens and RBAC — what a second
 * control-plane node of an HA cluster is. Its watch cache starts at the etcd revision of its
 * start, so a client that moves to it with an older `resourceVersion` gets 410 Expired, as
 * after a failover or an API server restart. Resolves once `/readyz` answers 200.
 */
export async function startSecondApiServer(
  kube: KubeEnv = infraEnv().kube,
  readyTimeoutMs = 180_000,
): Promise<SecondApiServer> {
  const k8sRun = dirname(kube.kubeconfig);
  const pid = (await readFile(join(k8sRun, 'kube-apiserver.pid'), 'utf8')).trim();
  const [exe, ...args] = (await readFile(`/proc/${pid}/cmdline`, 'utf8'))
    .split('\0')
    .filter((arg) => arg !== '');
  if (exe === undefined || !args.some((arg) => arg.startsWith('--secure-port=')))
    throw new Error(`process ${pid} is not the local kube-apiserver`);
  const port = await freePort();
  const log = join(dirname(k8sRun), 'logs', `k8s-kube-apiserver-${String(port)}.log`);
  const out = openSync(log, 'a');
  const child: ChildProcess = spawn(
    exe,
    args.map((arg) => (arg.startsWith('--secure-port=') ? `--secure-port=${String(port)}` : arg)),
    { stdio: ['ignore', out, out] },
  );
  closeSync(out);
  const exited = new Promise<void>((ended) => child.once('exit', () => ended()));
  const url = `https://127.0.0.1:${String(port)}`;
  const base = adminKubeConfig(kube);
  const cluster = base.getCurrentCluster();
  const user = base.getCurrentUser();
  if (cluster === null || user === null) throw new Error('the admin kubeconfig has no cluster');
  const admin = new KubeConfig();
  admin.loadFromOptions({
    clusters: [{ ...cluster, server: url }],
    users: [user],
    contexts: [{ name: 'second', cluster: cluster.name, user: user.name }],
    currentContext: 'second',
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  const deadline = Date.now() + readyTimeoutMs;
  while (!(await readyz(admin))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the second kube-apiserver on ${url} did not get ready (log: ${log})`);
    }
    await sleep(250);
  }
  return { url, admin, stop };
}
