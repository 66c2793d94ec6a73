// Runs whose state the dispatcher could misjudge (issue 15), on real Spark, the REST catalog,
// Redis and Kafka: a live run must never be taken for ended, a retry's before-figures are the
// table's when its own run starts, and a run whose state is unknown counts as running. Also
// batched runs (issue 18): three small tasks of one catalog in one spark-submit of the local
// runner, one on a table dropped before the run — by the runner alone, and taken together
// from the queue by the worker. The tables of every test are built in one
// Spark session and read back in one more.
import { readdir, readFile, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { RestCatalog } from '@icepack/iceberg';
import { createLogger, EnvelopeProducer, KafkaClient } from '@icepack/runtime';
import { tempDir } from '@icepack/test';
import {
  assertEventLifecycle,
  BULLMQ_PREFIX,
  parseCpuMillicores,
  queueNameForCatalog,
  type HealthFigures,
  type Task,
  type TaskEvent,
} from '@icepack/types';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sizeJob } from '../domain/sizing.ts';
import { LocalRunner } from '../runners/local-runner.ts';
import { taskHash } from '../runners/run-key.ts';
import type {
  BatchOutcome,
  BatchRunRequest,
  RunKey,
  RunOutcome,
  RunRequest,
  SparkRunner,
} from '../runners/spark-runner.ts';
import { heldLaunch, type HeldLaunch } from '../runners/testing/held-launch.ts';
import { LocalBudgetQuota } from './quota.ts';
import { CatalogTableHealth } from './table-health.ts';
import { KafkaDispatchSink, type DispatchSink } from './task-events.ts';
import { TaskWorker } from './task-worker.ts';
import {
  dispatchTableSets,
  type DispatchTableTarget,
  type DispatchTruth,
} from './testing/dispatch-tables.ts';
import { mergeTask } from './testing/sample-tasks.ts';
import { testBinding } from './testing/test-binding.ts';
import { SPARK_RUN_POLL, until } from './testing/until.ts';

const infra = inject('infra');
const suffix = Math.random().toString(36).slice(2, 8);
const KEY = 'unpartitioned-small-files';
/** The merge tasks' small-file bound (`mergeTask`). */
const MIN_FILE_SIZE = 96 * 1024 * 1024;
const logger = createLogger({ service: 'dispatch-unknown-runs-test', level: 'warn' });
const sparkOptions = {
  python: infra.python,
  catalogUri: infra.catalogUri,
  sparkJars: infra.sparkJars,
};

/** One table per test, each in its own namespace, built in one Spark session. */
const targets = {
  live: { catalogName: `unklive${suffix}`, prefix: `live_${suffix}` },
  retry: { catalogName: `unkretry${suffix}`, prefix: `retry_${suffix}` },
  unknown: { catalogName: `unkstate${suffix}`, prefix: `unknown_${suffix}` },
} satisfies Record<string, DispatchTableTarget>;
type Target = keyof typeof targets;
/** The batch's three tables: one catalog (a batch never spans two), a namespace each. */
const batchCatalog = `unkbatch${suffix}`;
const batchTargets = [1, 2, 3].map((n) => ({
  catalogName: batchCatalog,
  prefix: `batch${String(n)}_${suffix}`,
})) satisfies DispatchTableTarget[];

/** The worker's batch: three more tables of another catalog (the second dropped before). */
const workerBatchCatalog = `unkwbatch${suffix}`;
const workerBatchTargets = [1, 2, 3].map((n) => ({
  catalogName: workerBatchCatalog,
  prefix: `wbatch${String(n)}_${suffix}`,
})) satisfies DispatchTableTarget[];

/**
 * The tests' directories: the held launch's scripts and each test's runner state. Asked for
 * here, above the afterAll that closes the workers following the runs in them, so they are
 * removed after it (Vitest runs a block's afterAll hooks last registered first).
 */
const tempDirs = {
  held: tempDir('icepack-held-'),
  live: tempDir('icepack-live-'),
  retry: tempDir('icepack-retry-'),
  unknown: tempDir('icepack-unknown-'),
  batch: tempDir('icepack-batch-'),
  workerBatch: tempDir('icepack-worker-batch-'),
};

let built: Record<Target, DispatchTruth>;
let batchBuilt: DispatchTruth[];
let workerBatchBuilt: DispatchTruth[];
let held: HeldLaunch;
let redis: Redis;
let producer: EnvelopeProducer;
const cleanups: (() => Promise<void>)[] = [];

function truthOf(which: Record<string, DispatchTruth>): DispatchTruth {
  const t = which[KEY];
  if (t === undefined) throw new Error(`no truth for ${KEY}`);
  return t;
}

beforeAll(async () => {
  const names = Object.keys(targets) as (keyof typeof targets)[];
  const sets = await dispatchTableSets([KEY], sparkOptions, [
    ...Object.values(targets),
    ...batchTargets,
    ...workerBatchTargets,
  ]);
  built = Object.fromEntries(names.map((n, i) => [n, truthOf(sets[i] ?? {})])) as typeof built;
  batchBuilt = sets.slice(names.length, names.length + batchTargets.length).map(truthOf);
  workerBatchBuilt = sets.slice(names.length + batchTargets.length).map(truthOf);
  held = await heldLaunch(infra.python, tempDirs.held);
  redis = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
  producer = new EnvelopeProducer(
    new KafkaClient({ brokers: infra.kafkaBrokers, clientId: 'dispatch-unknown-runs', logger }),
  );
  await producer.connect();
}, 900_000);

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await producer.disconnect();
  redis.disconnect();
});

/** Polls until `probe` holds (no timing assertion). */

/** Waits for the run of `dir` to end (its result file), e.g. after a test released it. */
function resultOf(dir: string): Promise<void> {
  return until(
    `the result of ${dir}`,
    async () => (await readdir(dir).catch((): string[] => [])).includes('result.json'),
    SPARK_RUN_POLL,
  );
}

/** Publishes to Kafka and keeps each event in order, to compare with what else happened. */
class RecordingSink implements DispatchSink {
  readonly events: TaskEvent[] = [];
  readonly #kafka = new KafkaDispatchSink(producer);

  async taskEvent(event: TaskEvent): Promise<void> {
    this.events.push(event);
    await this.#kafka.taskEvent(event);
  }

  requestScan(table: Task['table'], taskId: string): Promise<void> {
    return this.#kafka.requestScan(table, taskId);
  }

  has(status: TaskEvent['status']): boolean {
    return this.events.some((e) => e.status === status);
  }
}

/** A local runner whose first `run` call ends as `first` says; later calls are the runner's. */
class FirstCallRunner implements SparkRunner {
  readonly kind = 'local';
  readonly requests: RunRequest[] = [];
  readonly local: LocalRunner;
  readonly #first: (request: RunRequest) => Promise<RunOutcome>;

  constructor(local: LocalRunner, first: (request: RunRequest) => Promise<RunOutcome>) {
    this.local = local;
    this.#first = first;
  }

  runName(key: RunKey): string {
    return this.local.runName(key);
  }

  isLaunched(key: RunKey): Promise<boolean> {
    return this.local.isLaunched(key);
  }

  run(request: RunRequest): Promise<RunOutcome> {
    this.requests.push(request);
    return this.requests.length === 1 ? this.#first(request) : this.local.run(request);
  }
}

interface WorkerSetup {
  readonly worker: TaskWorker;
  readonly queue: Queue;
  readonly sink: RecordingSink;
  readonly quota: LocalBudgetQuota;
  readonly health: CatalogTableHealth;
  readonly task: Task;
}

/** A worker on the target's catalog (real Redis, Kafka, REST catalog) and its merge task. */
async function workerFor(target: Target, runner: SparkRunner): Promise<WorkerSetup> {
  const { catalogName } = targets[target];
  const binding = testBinding(catalogName);
  const quota = new LocalBudgetQuota({ redis, prefix: `unknown-runs-${suffix}` });
  const sink = new RecordingSink();
  const health = new CatalogTableHealth(
    () => new RestCatalog({ name: catalogName, uri: infra.catalogUri }),
  );
  const worker = new TaskWorker({
    binding,
    connection: redis,
    runner,
    quota,
    sink,
    health,
    catalog: { name: catalogName, uri: infra.catalogUri },
    logger,
    backoffMs: 200,
    timeoutMs: 15 * 60_000,
  });
  const queue = new Queue(queueNameForCatalog(catalogName), {
    connection: redis,
    prefix: BULLMQ_PREFIX,
  });
  cleanups.push(async () => {
    await worker.close(true);
    await queue.obliterate({ force: true });
    await queue.close();
  });
  const task = mergeTask(built[target], 5);
  await worker.start();
  await queue.add(task.type, task, { jobId: task.id, removeOnComplete: true, removeOnFail: true });
  return { worker, queue, sink, quota, health, task };
}

describe('the local runner and a run it cannot see by its command line', () => {
  it('follows a live run whose command line does not name its run dir (as mid-exec) to its end: not lost, one launch; a dispatcher that finds no pid record finds the process', async () => {
    const { catalogName } = targets.live;
    const task = mergeTask(built.live, 5);
    const stateDir = tempDirs.live;
    const binding = testBinding(catalogName);
    const decision = sizeJob({
      bytes: task.state.bytesToRewrite,
      files: task.state.filesToRewrite,
      minInputFiles: 5,
      spark: binding.spark,
      room: {},
    });
    const request: RunRequest = {
      taskRun: `${task.id}@1`,
      attempt: 1,
      task,
      binding,
      size: decision.size,
      catalog: { name: catalogName, uri: infra.catalogUri },
      timeoutMs: 15 * 60_000,
    };
    let second: Promise<RunOutcome> | undefined;
    const runner: LocalRunner = new LocalRunner({
      stateDir,
      sparkSubmit: held.sparkSubmit,
      pollMs: 200,
      // Once the runner has looked at the held run and waits for its end: a second dispatcher
      // comes for the same attempt, as if the first had died between the spawn and writing
      // `pid`; then the run goes on.
      pause: async (ms) => {
        const dir = runner.runDir(request);
        if (second === undefined) {
          await rm(join(dir, 'pid'));
          second = new LocalRunner({ stateDir, pollMs: 200 }).run(request);
        }
        await held.release(dir);
        await sleep(ms);
      },
    });
    const dir = runner.runDir(request);
    const health = new CatalogTableHealth(
      () => new RestCatalog({ name: catalogName, uri: infra.catalogUri }),
    );
    const before = await health.read(task.table);
    let outcome: RunOutcome | undefined;
    try {
      outcome = await runner.run(request);
    } finally {
      // A runner that gave up on the run early leaves it held: let it go and wait for its
      // result, so the table is not changed behind the next test.
      await held.release(dir);
      await resultOf(dir);
    }
    const result = await readFile(join(dir, 'result.json'), 'utf8');
    expect(outcome, `the run itself ended with ${result}`).toMatchObject({
      ok: true,
      reattached: false,
    });
    expect(await second).toMatchObject({ ok: true, reattached: true });
    // One launch: the second dispatcher recorded the launch it found, it launched nothing.
    const lines = (await readFile(join(dir, 'runs.log'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { recovered?: boolean });
    expect(lines.filter((l) => l.recovered !== true)).toHaveLength(1);
    expect(await readdir(stateDir)).toHaveLength(1);
    const after = await health.read(task.table);
    expect(before.dataFiles).toBe(built.live.dataFiles.count);
    expect(after.dataFiles).toBeLessThan(before.dataFiles);
  }, 1_200_000);
});

describe('a retry', () => {
  it('reads its before-figures from the table when its own run starts, not the first attempt’s', async () => {
    const local = new LocalRunner({ stateDir: tempDirs.retry });
    const { catalogName } = targets.retry;
    const health = new CatalogTableHealth(
      () => new RestCatalog({ name: catalogName, uri: infra.catalogUri }),
    );
    let leftByFirst: HealthFigures | undefined;
    // Attempt 1 runs for real (it merges the 60 files) and is reported lost, as the runner
    // once did with live runs; attempt 2 starts from the table attempt 1 left.
    const runner = new FirstCallRunner(local, async (request) => {
      const { reattached } = await local.run(request);
      leftByFirst = await health.read(request.task.table, MIN_FILE_SIZE);
      return {
        ok: false,
        error: { kind: 'lost', message: 'the Spark job ended without a result', retryable: true },
        reattached,
      };
    });
    const { sink } = await workerFor('retry', runner);
    await until('the outcome', () => sink.has('succeeded') || sink.has('failed'), SPARK_RUN_POLL);
    const started = sink.events.filter((e) => e.status === 'started');
    const succeeded = sink.events.find((e) => e.status === 'succeeded');
    expect(started.map((e) => e.attempt)).toEqual([1, 2]);
    expect(started[0]?.before?.dataFiles).toBe(built.retry.dataFiles.count);
    expect(leftByFirst?.dataFiles).toBe(1);
    expect(started[1]?.before).toEqual(leftByFirst);
    expect(succeeded?.attempt).toBe(2);
    expect(succeeded?.before).toEqual(leftByFirst);
    assertEventLifecycle(sink.events);
  }, 1_200_000);
});

describe('a run whose state is unknown (runner error)', () => {
  it('stays active, keeps its quota claim and holds the drain until its end is known; one launch', async () => {
    const local = new LocalRunner({
      stateDir: tempDirs.unknown,
      sparkSubmit: held.sparkSubmit,
      pollMs: 200,
    });
    let followers: Promise<unknown> | undefined;
    // The first call launches the run (held at its start) and then loses it, as when the
    // API server stops answering: the run goes on, the dispatcher does not know its state.
    const runner = new FirstCallRunner(
      local,
      (request) =>
        new Promise((_ok, fail) => {
          followers = local
            .run({ ...request, onSubmitted: () => fail(new Error('socket hang up')) })
            .catch(() => undefined);
        }),
    );
    const setup = await workerFor('unknown', runner);
    const { sink, queue, quota, task, worker } = setup;
    const binding = testBinding(targets.unknown.catalogName);
    const request = await (async () => {
      await until(
        'the runner error',
        () => sink.events.some((e) => e.status === 'retrying' && e.error?.kind === 'runner'),
        SPARK_RUN_POLL,
      );
      const first = runner.requests[0];
      if (first === undefined) throw new Error('no run');
      return first;
    })();
    const runDir = local.runDir(request);
    let outcomeBeforeDrain: boolean | undefined;
    try {
      // Its claim stays while it may run: the room is the budget less that claim.
      const room = await quota.room(binding);
      expect.soft(room.cpuMillicores).toBeLessThan(parseCpuMillicores(binding.cpu));
      // The planner sees the job active (BullMQ's state), not waiting.
      expect.soft(await queue.getJobState(task.id)).toBe('active');
      // A drain (the binding draining, the worker closing) waits for the run's end.
      const drained = worker.close().then(() => {
        outcomeBeforeDrain = sink.has('succeeded') || sink.has('failed');
      });
      await held.release(runDir);
      await drained;
    } finally {
      await held.release(runDir);
      await resultOf(runDir);
      await followers;
    }
    expect(outcomeBeforeDrain).toBe(true);
    expect(sink.events.find((e) => e.status === 'succeeded')?.attempt).toBe(1);
    // Never put back as delayed (where the planner may replace or remove it) meanwhile.
    const stream = await redis.xrange(`${BULLMQ_PREFIX}:${queue.name}:events`, '-', '+');
    const delayed = stream.filter(([, fields]) => {
      const f = Object.fromEntries(
        fields.flatMap((v, i, all) => (i % 2 === 0 ? [[v, all[i + 1]]] : [])),
      ) as Record<string, string>;
      return f.event === 'delayed' && f.jobId === task.id;
    });
    expect(delayed).toEqual([]);
    // One launch, by the first call; the second followed it.
    const launches = (await readFile(join(runDir, 'runs.log'), 'utf8')).trim().split('\n');
    expect(launches).toHaveLength(1);
    expect(runner.requests.length).toBeGreaterThanOrEqual(2);
    expect(new Set(runner.requests.map((r) => local.runName(r)))).toEqual(
      new Set([local.runName(request)]),
    );
    assertEventLifecycle(sink.events);
  }, 1_200_000);
});

/** Drops the table in the REST catalog (with its files): its task must fail, alone. */
async function drop(t: DispatchTruth): Promise<void> {
  const namespace = encodeURIComponent(t.id.namespace.join('\x1f'));
  const url = `${infra.catalogUri}/v1/namespaces/${namespace}/tables/${encodeURIComponent(t.id.name)}`;
  const answer = await fetch(`${url}?purgeRequested=true`, { method: 'DELETE' });
  if (!answer.ok) throw new Error(`dropping ${t.id.name}: HTTP ${String(answer.status)}`);
}

describe('the local runner runs a batch of small tasks in one Spark application', () => {
  const GiB = 2 ** 30;
  let request: BatchRunRequest;
  let first: BatchOutcome;
  let second: BatchOutcome;
  const stateDir = tempDirs.batch;

  beforeAll(async () => {
    const dropped = batchBuilt[1]!;
    await drop(dropped);
    const tasks = batchBuilt.map((t) => mergeTask(t, 5));
    request = {
      batchRun: `batch-${suffix}@1`,
      attempt: 1,
      tasks: tasks.map((task, i) => ({ taskRun: `${task.id}@${String(i)}`, task })),
      binding: testBinding(batchCatalog),
      size: {
        driver: { cores: 1, memory: '1024m', memoryBytes: GiB },
        executor: { cores: 1, memory: '1024m', memoryBytes: GiB, instances: 1 },
        maxConcurrentFileGroupRewrites: 1,
        request: { cpuMillicores: 2000, memoryBytes: 2 * GiB },
      },
      catalog: { name: batchCatalog, uri: infra.catalogUri },
      timeoutMs: 15 * 60_000,
    };
    const options = { stateDir, pollMs: 500 };
    const runner = new LocalRunner(options);
    const running = runner.runBatch(request);
    // A restarted dispatcher asks for the same batch while it runs: it follows that launch.
    const runsLog = join(runner.batchDir(request), 'runs.log');
    await until(
      'the batch launch',
      async () => (await readFile(runsLog, 'utf8').catch(() => '')) !== '',
      SPARK_RUN_POLL,
    );
    second = await new LocalRunner(options).runBatch(request);
    first = await running;
  }, 1_200_000);

  it('launches one spark-submit for the batch, which the second caller follows', async () => {
    expect(first.reattached).toBe(false);
    expect(second.reattached).toBe(true);
    const dir = new LocalRunner({ stateDir }).batchDir(request);
    const launches = (await readFile(join(dir, 'runs.log'), 'utf8')).trim().split('\n');
    expect(launches).toHaveLength(1);
    expect(JSON.parse(launches[0]!)).toMatchObject({
      batchRun: request.batchRun,
      taskRuns: request.tasks.map((t) => t.taskRun),
    });
    expect(await readdir(stateDir)).toHaveLength(1);
    // Both report the same end for every task.
    expect([...second.ends.entries()]).toEqual([...first.ends.entries()]);
  });

  it('commits each small table on its own, with its own result', () => {
    for (const i of [0, 2]) {
      const end = first.ends.get(request.tasks[i]!.taskRun);
      expect(end?.ok, JSON.stringify(end)).toBe(true);
      if (end?.ok !== true) continue;
      expect(end.result?.taskId).toBe(request.tasks[i]!.task.id);
      expect(end.result?.commits?.filesRewritten).toBe(batchBuilt[i]!.dataFiles.count);
    }
    // Rows and file counts are checked with the other tables' (`the tables`, below).
  });

  it('fails only the task of the dropped table, with its own error', () => {
    const end = first.ends.get(request.tasks[1]!.taskRun);
    expect(end).toMatchObject({ ok: false, error: { kind: 'table-not-found', retryable: false } });
    expect(first.ends.size).toBe(3);
  });

  it('answers a later call from the result files, launching nothing', async () => {
    const again = await new LocalRunner({ stateDir }).runBatch(request);
    expect(again.reattached).toBe(true);
    expect([...again.ends.entries()]).toEqual([...first.ends.entries()]);
    const dir = new LocalRunner({ stateDir }).batchDir(request);
    expect((await readFile(join(dir, 'runs.log'), 'utf8')).trim().split('\n')).toHaveLength(1);
  });
});

describe('the worker takes waiting small tasks of its queue into one batch', () => {
  const stateDir = tempDirs.workerBatch;
  let sink: RecordingSink;
  let tasks: Task[];
  let batchDir: string;

  beforeAll(async () => {
    await drop(workerBatchBuilt[1]!);
    tasks = workerBatchBuilt.map((t) => mergeTask(t, 5));
    // One slot: the worker takes one task, which takes the two others waiting behind it.
    const binding = testBinding(workerBatchCatalog, { slots: 1, smallSlots: 0 });
    sink = new RecordingSink();
    const worker = new TaskWorker({
      binding,
      connection: redis,
      runner: new LocalRunner({ stateDir, pollMs: 500 }),
      quota: new LocalBudgetQuota({ redis, prefix: `worker-batch-${suffix}` }),
      sink,
      health: new CatalogTableHealth(
        () => new RestCatalog({ name: workerBatchCatalog, uri: infra.catalogUri }),
      ),
      catalog: { name: workerBatchCatalog, uri: infra.catalogUri },
      logger,
      backoffMs: 200,
      timeoutMs: 15 * 60_000,
      batch: {},
    });
    const queue = new Queue(queueNameForCatalog(workerBatchCatalog), {
      connection: redis,
      prefix: BULLMQ_PREFIX,
    });
    cleanups.push(async () => {
      await worker.close(true);
      await queue.obliterate({ force: true });
      await queue.close();
    });
    for (const task of tasks)
      await queue.add(task.type, task, {
        jobId: task.id,
        priority: 1,
        removeOnComplete: true,
        removeOnFail: true,
      });
    await worker.start();
    await until(
      'every job to be done',
      async () =>
        (await Promise.all(tasks.map((t) => queue.getJob(t.id)))).every((j) => j === undefined),
      SPARK_RUN_POLL,
    );
    const dirs = await readdir(stateDir);
    expect(dirs).toHaveLength(1);
    batchDir = join(stateDir, dirs[0]!);
  }, 1_200_000);

  it('runs them in one spark-submit, launched once with all three', async () => {
    expect(batchDir).toMatch(/\/batch-[^/]+$/);
    const launches = (await readFile(join(batchDir, 'runs.log'), 'utf8')).trim().split('\n');
    expect(launches).toHaveLength(1);
    const launch = JSON.parse(launches[0]!) as { taskRuns: string[] };
    expect(launch.taskRuns.map((r) => r.split('@')[0]).sort()).toEqual(
      tasks.map((t) => t.id).sort(),
    );
  });

  it('reports each task by its own end, events and ledger figures of its own', async () => {
    const runId = basename(batchDir);
    for (const [i, task] of tasks.entries()) {
      const events = sink.events.filter((e) => e.taskId === task.id);
      assertEventLifecycle(events);
      expect(events.every((e) => e.runId === runId && e.attempt === 1)).toBe(true);
      if (i === 1) {
        // The dropped table's task fails alone, with its own error; not retried.
        expect(events.map((e) => e.status)).toEqual(['started', 'failed']);
        expect(events[1]?.error).toMatchObject({ kind: 'table-not-found', retryable: false });
        continue;
      }
      expect(events.map((e) => e.status)).toEqual(['started', 'succeeded']);
      const result = JSON.parse(
        await readFile(join(batchDir, 'results', `${taskHash(task.id)}.json`), 'utf8'),
      ) as { durationMs: number; commits: { filesRewritten: number } };
      const done = events[1]!;
      // Its own time in the session, not the batch's: the ledger sums to the batch's cost.
      expect(done.cost?.runMs).toBe(result.durationMs);
      expect(done.cost?.filesRewritten).toBe(workerBatchBuilt[i]!.dataFiles.count);
      expect(done.after?.dataFiles).toBeLessThan(workerBatchBuilt[i]!.dataFiles.count);
    }
  });
});

describe('the tables', () => {
  it('hold the same rows after every run, in fewer files', async () => {
    // The batches' dropped tables are gone; their two others were merged in the batch.
    const batchKept = [...batchTargets, ...workerBatchTargets].filter((_, i) => i % 3 !== 1);
    const batchKeptBuilt = [...batchBuilt, ...workerBatchBuilt].filter((_, i) => i % 3 !== 1);
    const sets = await dispatchTableSets(
      [KEY],
      sparkOptions,
      [...Object.values(targets), ...batchKept],
      { truthOnly: true },
    );
    for (const [i, name] of (Object.keys(targets) as Target[]).entries()) {
      const now = truthOf(sets[i] ?? {});
      expect(now.contentChecksum, name).toEqual(built[name].contentChecksum);
      expect(now.dataFiles.count, name).toBeLessThan(built[name].dataFiles.count);
    }
    for (const [j, was] of batchKeptBuilt.entries()) {
      const now = truthOf(sets[Object.keys(targets).length + j] ?? {});
      expect(now.currentSnapshotId, `batch table ${String(j)}`).not.toBe(was.currentSnapshotId);
      expect(now.contentChecksum, `batch table ${String(j)}`).toEqual(was.contentChecksum);
      expect(now.dataFiles.count, `batch table ${String(j)}`).toBeLessThan(was.dataFiles.count);
    }
  }, 900_000);
});
