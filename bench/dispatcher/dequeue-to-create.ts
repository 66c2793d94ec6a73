// Dispatch latency: a task's dequeue (BullMQ `processedOn`) → its SparkApplication created on
// the API server, with 1,000 waiting tasks across 10 catalogs. Run (Redis up:
// bash deploy/local/infra.sh up redis):
//   node bench/dispatcher/dequeue-to-create.ts [tasks] [catalogs] [slots] [fake|real] \
//     [old checkout root] [launch gate] [passes]
// With an old checkout (a worktree of an earlier commit, `pnpm install`ed), its dispatcher
// code and this one run alternately in one process (`passes` rounds each, the order swapped
// every pass), so both see the same machine and load; CPU per dispatch is the figure a shared
// machine distorts least. This checkout's workers share one launch gate of `launch gate`
// permits (ADR 0040; default the dispatcher's); `0` runs them without one. An old checkout
// without the gate ignores it.
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
import { loadavg } from 'node:os';
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
import type * as DispatcherTesting from '@icepack/dispatcher/testing';
import type { RunOutcome, RunRequest } from '@icepack/dispatcher/testing';
import { controlPlanePid, machineBlock, processCpuMs } from './api-server.ts';

const total = Number(process.argv[2] ?? 1_000);
const catalogs = Number(process.argv[3] ?? 10);
const slots = Number(process.argv[4] ?? 4);
const api = process.argv[5] ?? 'fake';
if (api !== 'fake' && api !== 'real') throw new Error(`api must be fake or real, not ${api}`);
const oldRoot = process.argv[6] === undefined ? undefined : resolve(process.argv[6]);
const gateArg = process.argv[7];
const passes = Number(process.argv[8] ?? 1);
const newRoot = resolve(import.meta.dirname, '..', '..');
const redisUrl = `redis://127.0.0.1:${process.env.ICEPACK_REDIS_PORT ?? '16379'}`;
const logger = createLogger({
  service: 'bench',
  level: 'warn',
  destination: new Writable({ write: (_c, _e, cb) => cb() }),
});

/** The dispatcher code of one checkout: what a round needs of `@icepack/dispatcher/testing`. */
type Testing = typeof DispatcherTesting;
interface DispatcherCode {
  readonly label: string;
  readonly testing: Testing;
  /** This checkout's launch gate (none for an old checkout, or with `0`). */
  readonly gate: () => object | undefined;
}

async function load(label: string, root: string, own: boolean): Promise<DispatcherCode> {
  const testing = (await import(
    resolve(root, 'services/dispatcher/src/adapters/testing/index.ts')
  )) as Testing;
  const permits = gateArg === undefined ? undefined : Number(gateArg);
  return {
    label,
    testing,
    gate: () =>
      !own || permits === 0
        ? undefined
        : new testing.LaunchGate(...(permits === undefined ? [] : [permits])),
  };
}

/** Creates the application and returns: what is measured ends at the create. */
function submitOnly(testing: Testing): Testing['SparkOperatorRunner'] {
  return class SubmitOnlyRunner extends testing.SparkOperatorRunner {
    override async run(request: RunRequest): Promise<RunOutcome> {
      const { existed } = await this.submit(request);
      request.onSubmitted?.();
      return { ok: true, reattached: existed };
    }
  };
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

interface Row {
  readonly code: string;
  readonly pass: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly wallMs: number;
  readonly dispatcherCpuMs: number;
  readonly apiCpuMs: number;
  readonly load: number;
}

const apiServer = await startApi();
const apiCpuMs = (): number => processCpuMs(apiServer.pid);
const kc = apiServer.kc;
const core = kc.makeApiClient(CoreV1Api);
const redis = createRedisConnection(redisUrl, { role: 'worker', logger }).redis;

/** One round: fresh catalogs with `total` waiting tasks, dispatched by `code`'s workers. */
async function round(code: DispatcherCode, pass: number): Promise<Row> {
  const { testing } = code;
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
  // `total` waiting tasks, spread evenly, before any worker starts.
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
  const Runner = submitOnly(testing);
  const gate = code.gate();
  const workers = names.map(
    (name) =>
      new testing.TaskWorker({
        binding: testing.testBinding(name, {
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
        runner: new Runner({ kubeConfig: kc }),
        quota: new testing.KubeQuota(kc),
        sink: new testing.InMemoryDispatchSink(),
        health: { read: () => Promise.resolve(figures) },
        catalog: { name, uri: 'http://127.0.0.1:1' },
        logger,
        onDispatched: (ms: number) => {
          latencies.push(ms);
          if (latencies.length === total) finish();
        },
        // Unknown to an old checkout's TaskWorker: ignored there.
        ...(gate === undefined ? {} : { launchGate: gate }),
      } as ConstructorParameters<Testing['TaskWorker']>[0]),
  );
  for (const worker of workers) await worker.start();
  await allDone;
  const wall = Date.now() - started;
  const cpuUsed = process.cpuUsage(cpuStart.dispatcher);
  const apiUsed = apiCpuMs() - cpuStart.api;
  for (const worker of workers) await worker.close();
  for (const queue of queues) {
    await queue.obliterate({ force: true });
    await queue.close();
  }
  if (api === 'real') {
    // The real server keeps what was created: delete the namespaces (and their applications).
    for (const name of names) await core.deleteNamespace({ name: `icepack-${name}` });
  }
  latencies.sort((a, b) => a - b);
  const pct = (p: number): number =>
    latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)] ?? NaN;
  return {
    code: code.label,
    pass,
    p50: pct(50),
    p90: pct(90),
    p99: pct(99),
    max: latencies.at(-1) ?? NaN,
    wallMs: wall,
    dispatcherCpuMs: (cpuUsed.user + cpuUsed.system) / 1000 / total,
    apiCpuMs: apiUsed / total,
    load: loadavg()[0] ?? NaN,
  };
}

const gateLabel = gateArg === '0' ? 'no gate' : `gate ${gateArg ?? 'default'}`;
const codes = [
  ...(oldRoot === undefined ? [] : [await load(`old (${oldRoot})`, oldRoot, false)]),
  await load(`new (${gateLabel})`, newRoot, true),
];
const rows: Row[] = [];
try {
  for (let pass = 1; pass <= passes; pass += 1)
    // Alternate which goes first, so neither always runs after the other's leftovers.
    for (const code of pass % 2 === 1 ? codes : [...codes].reverse())
      rows.push(await round(code, pass));
} finally {
  apiServer.stop();
  redis.disconnect();
}

const median = (xs: number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const of = (code: DispatcherCode, f: (r: Row) => number): number =>
  median(rows.filter((r) => r.code === code.label).map(f));
const command = `node bench/dispatcher/dequeue-to-create.ts ${process.argv.slice(2).join(' ')}`;
console.log(
  [
    `# dispatcher: dequeue → SparkApplication created (${api} API server)`,
    '',
    ...machineBlock(),
    '',
    `Command: \`${command}\``,
    '',
    `tasks ${String(total)} across ${String(catalogs)} catalogs, ${String(slots)} slots each (global concurrency); ${String(passes)} pass(es) per code, medians over passes`,
    '',
    '| code | p50 | p90 | p99 | max | wall for all | CPU/dispatch: dispatcher | CPU/dispatch: API server |',
    '|---|---|---|---|---|---|---|---|',
    ...codes.map(
      (c) =>
        `| ${c.label} | ${String(of(c, (r) => r.p50))} ms | ${String(of(c, (r) => r.p90))} ms | **${String(of(c, (r) => r.p99))} ms** | ${String(of(c, (r) => r.max))} ms | ${String(of(c, (r) => r.wallMs))} ms | ${of(c, (r) => r.dispatcherCpuMs).toFixed(2)} ms | ${of(c, (r) => r.apiCpuMs).toFixed(2)} ms |`,
    ),
    '',
    'Every round:',
    '',
    '| code | pass | p50 | p90 | p99 | max | wall | CPU/dispatch: dispatcher / API server | load (1 min) |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.code} | ${String(r.pass)} | ${String(r.p50)} | ${String(r.p90)} | ${String(r.p99)} | ${String(r.max)} | ${String(r.wallMs)} | ${r.dispatcherCpuMs.toFixed(2)} / ${r.apiCpuMs.toFixed(2)} | ${r.load.toFixed(1)} |`,
    ),
  ].join('\n'),
);
