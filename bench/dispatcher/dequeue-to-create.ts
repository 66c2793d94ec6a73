// Dispatch latency: a task's dequeue (BullMQ `processedOn`) → its SparkApplication created on
// the API server, with 1,000 waiting tasks across 10 catalogs. Run (Redis up:
// bash deploy/local/infra.sh up redis):
//   node bench/dispatcher/dequeue-to-create.ts [tasks] [catalogs] [slots] [fake|real]
// `fake` (the default): the repo's fake API server (test/src/k8s/main.ts), in its own process
// as a real one would be. `real`: the local control plane of deploy/local/k8s.sh (a real
// kube-apiserver with etcd, RBAC and admission; start it with `bash deploy/local/k8s.sh up`),
// reached with its admin credentials; the Spark operator is paused (SIGSTOP) for the window so
// that its reconciling of 1,000 applications does not share the two cores with the path
// measured, and resumed afterwards. The path measured is the dispatcher's own: job parse, attempt lookup (Redis),
// quota read (the watch-fed ResourceQuota cache; a list until the watch has synced), sizing,
// quota claim, `started` event (in-memory sink: Kafka is left out) and its Redis record,
// SparkApplication create. The run is not followed: the runner returns once it is created.
import { Writable } from 'node:stream';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { kubeConfigFor } from '@icepack/test/k8s';
import { adminKubeConfig } from '@icepack/test';
import { createLogger, createRedisConnection } from '@icepack/runtime';
import {
  BULLMQ_PREFIX,
  queueNameForCatalog,
  sampleMergeTask,
  sampleTableId,
  type HealthFigures,
} from '@icepack/types';
import { Queue } from 'bullmq';
import {
  InMemoryDispatchSink,
  KubeQuota,
  SparkOperatorRunner,
  TaskWorker,
  testBinding,
  type RunOutcome,
  type RunRequest,
} from '@icepack/dispatcher/testing';
import { controlPlanePid, machineBlock, processCpuMs } from './api-server.ts';

const total = Number(process.argv[2] ?? 1_000);
const catalogs = Number(process.argv[3] ?? 10);
const slots = Number(process.argv[4] ?? 4);
const api = process.argv[5] ?? 'fake';
if (api !== 'fake' && api !== 'real') throw new Error(`api must be fake or real, not ${api}`);
const redisUrl = `redis://127.0.0.1:${process.env.ICEPACK_REDIS_PORT ?? '16379'}`;
const logger = createLogger({
  service: 'bench',
  level: 'warn',
  destination: new Writable({ write: (_c, _e, cb) => cb() }),
});

/** Creates the application and returns: what is measured ends at the create. */
class SubmitOnlyRunner extends SparkOperatorRunner {
  override async run(request: RunRequest): Promise<RunOutcome> {
    const { existed } = await this.submit(request);
    request.onSubmitted?.();
    return { ok: true, reattached: existed };
  }
}

const figures: HealthFigures = {
  dataFiles: 10,
  smallFiles: 5,
  deleteFiles: 0,
  snapshots: 3,
  bytes: 1,
};
/** The API server: the fake in a child process, or the running real one (its pid from k8s.sh). */
interface ApiServer {
  readonly kc: KubeConfig;
  readonly pid: number;
  readonly stop: () => void;
}

async function startApi(): Promise<ApiServer> {
  if (api === 'real') {
    const operator = controlPlanePid('spark-operator');
    process.kill(operator, 'SIGSTOP');
    // The operator is shared with every test on this control plane: resumed however this ends.
    process.once('exit', () => {
      try {
        process.kill(operator, 'SIGCONT');
      } catch {
        // Gone meanwhile.
      }
    });
    return {
      kc: adminKubeConfig(),
      pid: controlPlanePid('kube-apiserver'),
      stop: () => process.kill(operator, 'SIGCONT'),
    };
  }
  const child = spawn(
    process.execPath,
    [resolve(import.meta.dirname, '..', '..', 'test', 'src', 'k8s', 'main.ts')],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((ok) =>
    child.stdout.once('data', (chunk: Buffer) => ok(chunk.toString().trim())),
  );
  return { kc: kubeConfigFor(url), pid: child.pid ?? NaN, stop: () => child.kill('SIGTERM') };
}

const apiServer = await startApi();
const apiCpuMs = (): number => processCpuMs(apiServer.pid);
const kc = apiServer.kc;
const core = kc.makeApiClient(CoreV1Api);
const redis = createRedisConnection(redisUrl, { role: 'worker', logger }).redis;
const run = Math.random().toString(36).slice(2, 7);
const names = Array.from({ length: catalogs }, (_, i) => `bench${run}c${String(i)}`);

const queues = names.map(
  (name) => new Queue(queueNameForCatalog(name), { connection: redis, prefix: BULLMQ_PREFIX }),
);
for (const name of names) {
  const namespace = `icepack-${name}`;
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await core.createNamespacedResourceQuota({
    namespace,
    body: {
      metadata: { name: 'icepack' },
      spec: { hard: { 'requests.cpu': '1000', 'requests.memory': '4Ti' } },
    },
  });
}
// 1,000 waiting tasks, spread evenly, before any worker starts.
for (let i = 0; i < total; i += 1) {
  const catalog = names[i % catalogs] ?? '';
  const table = sampleTableId({ catalog, namespace: ['bench'], name: `t${String(i)}` });
  const task = sampleMergeTask({ table });
  await queues[i % catalogs]?.add('merge', task, {
    jobId: task.id,
    priority: 1 + (i % 50),
    removeOnComplete: true,
  });
}

const latencies: number[] = [];
const started = Date.now();
const cpuStart = { dispatcher: process.cpuUsage(), api: apiCpuMs() };
let finish: () => void = () => undefined;
const allDone = new Promise<void>((ok) => (finish = ok));
const workers = names.map(
  (name) =>
    new TaskWorker({
      binding: testBinding(name, {
        slots,
        // BENCH_SMALL_SLOTS=0 compares like for like with code before the small-task lane.
        ...(process.env.BENCH_SMALL_SLOTS === undefined
          ? {}
          : { smallSlots: Number(process.env.BENCH_SMALL_SLOTS) }),
        runner: 'spark-operator',
        cpu: '1000',
        memory: '4Ti',
      }),
      connection: redis,
      runner: new SubmitOnlyRunner({ kubeConfig: kc }),
      quota: new KubeQuota(kc),
      sink: new InMemoryDispatchSink(),
      health: { read: () => Promise.resolve(figures) },
      catalog: { name, uri: 'http://127.0.0.1:1' },
      logger,
      onDispatched: (ms) => {
        latencies.push(ms);
        if (latencies.length === total) finish();
      },
    }),
);
for (const worker of workers) await worker.start();
await allDone;
const wall = Date.now() - started;
const cpuUsed = process.cpuUsage(cpuStart.dispatcher);
const cpuPerDispatch = {
  dispatcher: (cpuUsed.user + cpuUsed.system) / 1000 / total,
  api: (apiCpuMs() - cpuStart.api) / total,
};
for (const worker of workers) await worker.close();
for (const queue of queues) {
  await queue.obliterate({ force: true });
  await queue.close();
}
apiServer.stop();
if (api === 'real') {
  // The real server keeps what was created: delete the namespaces (and their applications).
  for (const name of names) await core.deleteNamespace({ name: `icepack-${name}` });
}
redis.disconnect();

latencies.sort((a, b) => a - b);
const pct = (p: number): number =>
  latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)] ?? NaN;
const apps = total;
console.log(
  [
    `# dispatcher: dequeue → SparkApplication created (${api} API server)`,
    '',
    ...machineBlock(),
    '',
    `tasks ${String(total)} across ${String(catalogs)} catalogs, ${String(slots)} slots each (global concurrency), ${String(apps)} SparkApplications created in ${String(wall)} ms`,
    '',
    `CPU per dispatch (the dispatch window): dispatcher process ${cpuPerDispatch.dispatcher.toFixed(2)} ms, API server process ${cpuPerDispatch.api.toFixed(2)} ms`,
    '',
    '| p50 | p90 | p99 | max |',
    '|---|---|---|---|',
    `| ${String(pct(50))} ms | ${String(pct(90))} ms | ${String(pct(99))} ms | ${String(latencies.at(-1))} ms |`,
  ].join('\n'),
);
