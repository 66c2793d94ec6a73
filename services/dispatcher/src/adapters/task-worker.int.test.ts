// The worker's bookkeeping around a run, against the real Redis with a scripted runner (no
// Spark): what it does when the runner fails, and when a job comes back after its run ended.
import { createLogger } from '@icepack/runtime';
import {
  assertEventLifecycle,
  JOB_RUN_LOCATION_FIELD,
  queueNameForCatalog,
  runLocationSchema,
  type RunLocation,
  sampleMergeTask,
  sampleTableId,
  type Binding,
  type SizingSample,
  type Task,
} from '@icepack/types';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { LARGE_SLOTS_BUSY } from '../domain/lanes.ts';
import { minInputFilesOf, sizeJob } from '../domain/sizing.ts';
import type { JobResult } from '../runners/job-result.ts';
import type { BatchLimits } from '../domain/batch.ts';
import type {
  BatchOutcome,
  BatchRunRequest,
  RunEnd,
  RunKey,
  RunOutcome,
  RunRequest,
  SparkRunner,
} from '../runners/spark-runner.ts';
import { RedisLargeSlots, type LargeSlotGate } from './large-slots.ts';
import type { QuotaGate } from './quota.ts';
import type { SizingModelSource } from './sizing-store.ts';
import { InMemoryDispatchSink, type DispatchSink } from './task-events.ts';
import { TaskWorker, type TaskWorkerOptions } from './task-worker.ts';
import { roomyQuota, tableFigures } from './testing/fixtures.ts';
import { testBinding } from './testing/test-binding.ts';
import { until } from './testing/until.ts';

const infra = inject('infra');
const prefix = `icepack-worker-test-${Math.random().toString(36).slice(2, 8)}`;
const logger = createLogger({ service: 'task-worker-test', level: 'silent' });

/** A runner that plays a script: one step per `run` call. */
class ScriptedRunner implements SparkRunner {
  readonly kind = 'scripted';
  readonly calls: { taskRun: string; attempt: number }[] = [];
  readonly #steps: ((request: RunRequest) => Promise<RunOutcome>)[];

  constructor(steps: ((request: RunRequest) => Promise<RunOutcome>)[]) {
    this.#steps = steps;
  }

  runName(key: RunKey): string {
    return `run-${String(key.attempt)}`;
  }

  isLaunched(): Promise<boolean> {
    return Promise.resolve(this.calls.length > 0);
  }

  run(request: RunRequest): Promise<RunOutcome> {
    this.calls.push({ taskRun: request.taskRun, attempt: request.attempt });
    const step = this.#steps.shift();
    if (step === undefined) throw new Error('the runner was called more often than scripted');
    return step(request);
  }
}

const succeeds = (): Promise<RunOutcome> => Promise.resolve({ ok: true, reattached: false });

let redis: Redis;
const open: { worker: TaskWorker; queue: Queue }[] = [];

function setup(
  catalog: string,
  runner: SparkRunner,
  options: {
    sink?: DispatchSink;
    quota?: QuotaGate;
    lockDurationMs?: number;
    timeoutMs?: number;
    sizingModel?: SizingModelSource;
    binding?: Partial<Binding>;
    /** The worker's own Redis connection (to cut it as a crash would). Default the shared one. */
    connection?: Redis;
    largeSlots?: LargeSlotGate;
    claimRenewMs?: number;
    quotaWaitMs?: number;
    maxStalledCount?: number;
    batch?: BatchLimits;
    onWait?: TaskWorkerOptions['onWait'];
  } = {},
) {
  const sink = options.sink ?? new InMemoryDispatchSink();
  const worker = new TaskWorker({
    binding: testBinding(catalog, options.binding),
    connection: options.connection ?? redis,
    ...(options.largeSlots === undefined ? {} : { largeSlots: options.largeSlots }),
    ...(options.claimRenewMs === undefined ? {} : { claimRenewMs: options.claimRenewMs }),
    ...(options.quotaWaitMs === undefined ? {} : { quotaWaitMs: options.quotaWaitMs }),
    ...(options.maxStalledCount === undefined ? {} : { maxStalledCount: options.maxStalledCount }),
    runner,
    quota: options.quota ?? roomyQuota,
    sink,
    health: { read: () => Promise.resolve(tableFigures) },
    catalog: { name: catalog, uri: 'http://127.0.0.1:1' },
    logger,
    prefix,
    backoffMs: 50,
    lockDurationMs: options.lockDurationMs ?? 5_000,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.sizingModel === undefined ? {} : { sizingModel: options.sizingModel }),
    ...(options.batch === undefined ? {} : { batch: options.batch }),
    ...(options.onWait === undefined ? {} : { onWait: options.onWait }),
  });
  const queue = new Queue(queueNameForCatalog(catalog), { connection: redis, prefix });
  open.push({ worker, queue });
  return { worker, queue, sink };
}

function taskOf(catalog: string): Task {
  return sampleMergeTask({ table: sampleTableId({ catalog, namespace: ['db'], name: 't' }) });
}

async function enqueue(queue: Queue, task: Task, priority?: number): Promise<void> {
  await queue.add(task.type, task, {
    jobId: task.id,
    removeOnComplete: true,
    removeOnFail: true,
    ...(priority === undefined ? {} : { priority }),
  });
}

/** Polls until `probe` holds; no timing assertion. */

beforeAll(() => {
  redis = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
});

afterEach(async () => {
  for (const { worker, queue } of open.splice(0)) {
    await worker.close(true);
    await queue.obliterate({ force: true });
    await queue.close();
  }
});

afterAll(() => {
  redis.disconnect();
});

/** Cores `sizeJob` gives the task on the test binding with unlimited room. */
function coresFor(task: Task, catalog: string): number {
  const { size } = sizeJob({
    bytes: task.state.bytesToRewrite,
    files: task.state.filesToRewrite,
    minInputFiles: minInputFilesOf(task),
    spark: testBinding(catalog).spark,
    room: {},
  });
  return size.driver.cores + size.executor.cores * size.executor.instances;
}

describe('TaskWorker', () => {
  it('puts the run’s cost and benefit (the ledger) on its succeeded event, from the job’s result', async () => {
    const jobFigures = (snapshots: number, dataFiles: number) => ({
      snapshotId: String(snapshots),
      snapshots,
      dataFiles,
      deleteFiles: 0,
      bytes: 1,
      records: 10,
    });
    const result: JobResult = {
      ok: true,
      taskId: 'x',
      type: 'merge',
      exitCode: 0,
      before: jobFigures(3, 9),
      after: jobFigures(4, 2),
      durationMs: 5,
      commits: {
        bytesRead: 900,
        bytesWritten: 850,
        filesRewritten: 8,
        dataFilesRemoved: 7,
        deleteFilesRemoved: 0,
      },
      cpuSeconds: 12.5,
    };
    const runner = new ScriptedRunner([
      () => Promise.resolve({ ok: true, result, reattached: false }),
    ]);
    const catalog = 'worker-ledger';
    const { worker, queue, sink } = setup(catalog, runner);
    await worker.start();
    const task = taskOf(catalog);
    await enqueue(queue, task);
    const sunk = sink as InMemoryDispatchSink;
    await until('success', () => sunk.events.some((e) => e.status === 'succeeded'));
    const succeeded = sunk.events.find((e) => e.status === 'succeeded')!;
    const started = sunk.events.find((e) => e.status === 'started')!;
    const cost = succeeded.cost!;
    expect(cost).toMatchObject({
      coreSecondsUsed: 12.5,
      bytesRead: 900,
      bytesWritten: 850,
      filesRewritten: 8,
    });
    // From `started` to the end: within the events' own times.
    expect(cost.runMs).toBeLessThanOrEqual(Date.parse(succeeded.at) - Date.parse(started.at) + 1);
    expect(cost.coreSecondsRequested).toBeCloseTo((coresFor(task, catalog) * cost.runMs) / 1000, 3);
    expect(succeeded.benefit).toEqual({
      dataFilesRemoved: 7,
      smallFilesRemoved: 0,
      deleteFilesRemoved: 0,
      snapshotsRemoved: -1,
      bytesSaved: 50,
    });
  });

  it('records on the running job where its run is and where its logs are (no secret)', async () => {
    let finish = (): void => undefined;
    const running = new Promise<RunOutcome>((resolve) => {
      finish = () => resolve({ ok: true, reattached: false });
    });
    const runner = new ScriptedRunner([() => running]);
    const located: SparkRunner = Object.assign(runner, {
      location: (key: RunKey & Pick<RunRequest, 'binding'>): RunLocation => ({
        runner: runner.kind,
        runId: runner.runName(key),
        application: { namespace: key.binding.namespace, name: runner.runName(key) },
        logs: [`kubectl logs -n ${key.binding.namespace} ${runner.runName(key)}-driver`],
      }),
    });
    const catalog = 'worker-run-location';
    const { worker, queue, sink } = setup(catalog, located);
    await worker.start();
    const task = taskOf(catalog);
    await enqueue(queue, task);
    const jobKey = `${prefix}:${queueNameForCatalog(catalog)}:${task.id}`;
    let recorded: string | null = null;
    await until('the run location on the job', async () => {
      recorded = await redis.hget(jobKey, JOB_RUN_LOCATION_FIELD);
      return recorded !== null;
    });
    const { namespace } = testBinding(catalog);
    expect(runLocationSchema.parse(JSON.parse(recorded!))).toEqual({
      runner: 'scripted',
      runId: 'run-1',
      application: { namespace, name: 'run-1' },
      logs: [`kubectl logs -n ${namespace} run-1-driver`],
    });
    // The same run the started event names.
    const sunk = sink as InMemoryDispatchSink;
    expect(sunk.events.find((e) => e.status === 'started')?.runId).toBe('run-1');
    finish();
    await until('success', () => sunk.events.some((e) => e.status === 'succeeded'));
  });

  it('gives the attempt after an out-of-memory run twice the memory; one at the group’s most fails, saying so', async () => {
    const sizes: string[] = [];
    const outOfMemory = (request: RunRequest): Promise<RunOutcome> => {
      sizes.push(`executor ${request.size.executor.memory}, driver ${request.size.driver.memory}`);
      return Promise.resolve({
        ok: false,
        error: {
          kind: 'out-of-memory',
          message: 'java.lang.OutOfMemoryError: Java heap space',
          retryable: true,
        },
        reattached: false,
      });
    };
    const samples: SizingSample[] = [];
    const sizingModel: SizingModelSource = {
      options: () => ({}),
      record: (sample) => Promise.resolve(void samples.push(sample)),
    };
    const runner = new ScriptedRunner([outOfMemory, outOfMemory]);
    const { worker, queue, sink } = setup('worker-oom', runner, { sizingModel });
    await worker.start();
    await enqueue(queue, taskOf('worker-oom'));
    const sunk = sink as InMemoryDispatchSink;
    await until('the outcome', () => sunk.events.some((e) => e.status === 'failed'));
    // The test binding's group: executors of 2 cores and 4g, driver 2g at most.
    expect(sizes).toEqual(['executor 2048m, driver 1024m', 'executor 4096m, driver 2048m']);
    expect(sunk.events.map((e) => [e.status, e.attempt])).toEqual([
      ['started', 1],
      ['retrying', 1],
      ['started', 2],
      ['failed', 2],
    ]);
    expect(sunk.events[1]?.reason).toBe(
      'retry 2 of 3 in 0s: out of memory with executor 2048m, driver 1024m: twice the memory',
    );
    expect(sunk.events[3]?.error).toEqual({
      kind: 'out-of-memory',
      retryable: false,
      message:
        "java.lang.OutOfMemoryError: Java heap space (out of memory at the group's most (executor 4g, driver 2g))",
    });
    // Each run left a sample of what it was given, marked out of memory.
    expect(samples.map((s) => [s.outcome, s.cores])).toEqual([
      ['oom', 2],
      ['oom', 2],
    ]);
    assertEventLifecycle(sunk.events);
  });

  it('follows the same run again after a runner error instead of launching a new attempt', async () => {
    const runner = new ScriptedRunner([
      () => Promise.reject(new Error('socket hang up')),
      () => Promise.resolve({ ok: true, reattached: true }),
    ]);
    const { worker, queue, sink } = setup('worker-runner-error', runner);
    await worker.start();
    const task = taskOf('worker-runner-error');
    await enqueue(queue, task);
    const sunk = sink as InMemoryDispatchSink;
    await until('success', () => sunk.events.some((e) => e.status === 'succeeded'));
    // Both calls were for attempt 1 of the same task run: the run was followed, not relaunched.
    expect(runner.calls).toHaveLength(2);
    expect(new Set(runner.calls.map((c) => `${c.taskRun} ${String(c.attempt)}`)).size).toBe(1);
    expect(sunk.events.map((e) => [e.status, e.attempt, e.runId, e.error?.kind])).toEqual([
      ['started', 1, 'run-1', undefined],
      ['retrying', 1, 'run-1', 'runner'],
      ['succeeded', 1, 'run-1', undefined],
    ]);
    assertEventLifecycle(sunk.events);
  });

  it('keeps following a started run through more runner errors than attempts: its state is unknown, not ended', async () => {
    const hangUp = () => Promise.reject(new Error('socket hang up'));
    const runner = new ScriptedRunner([
      hangUp,
      hangUp,
      hangUp,
      hangUp,
      () => Promise.resolve({ ok: true, reattached: true }),
    ]);
    const { worker, queue, sink } = setup('worker-unknown-state', runner);
    await worker.start();
    await enqueue(queue, taskOf('worker-unknown-state'));
    const sunk = sink as InMemoryDispatchSink;
    await until('the outcome', () =>
      sunk.events.some((e) => e.status === 'succeeded' || e.status === 'failed'),
    );
    expect(sunk.events.map((e) => e.status)).toEqual([
      'started',
      'retrying',
      'retrying',
      'retrying',
      'retrying',
      'succeeded',
    ]);
    expect(new Set(runner.calls.map((c) => c.attempt))).toEqual(new Set([1]));
    assertEventLifecycle(sunk.events);
  });

  it('fails a started task whose run state stays unknown past the task timeout', async () => {
    const runner = new ScriptedRunner([() => Promise.reject(new Error('socket hang up'))]);
    const { worker, queue, sink } = setup('worker-unknown-timeout', runner, { timeoutMs: 0 });
    await worker.start();
    await enqueue(queue, taskOf('worker-unknown-timeout'));
    const sunk = sink as InMemoryDispatchSink;
    await until('the outcome', () => sunk.events.some((e) => e.status === 'failed'));
    expect(sunk.events.map((e) => [e.status, e.error?.kind])).toEqual([
      ['started', undefined],
      ['failed', 'runner'],
    ]);
    expect(sunk.events[1]?.reason).toMatch(/run state unknown past the task timeout/);
  });

  it('puts a task back (updated, not retrying) when the quota cannot be read, and loses it not', async () => {
    let reads = 0;
    const flakyQuota: QuotaGate = {
      ...roomyQuota,
      room: () =>
        reads++ === 0
          ? Promise.reject(new Error('connect ECONNREFUSED'))
          : roomyQuota.room(testBinding('x')),
    };
    const runner = new ScriptedRunner([succeeds]);
    const { worker, queue, sink } = setup('worker-quota-error', runner, { quota: flakyQuota });
    await worker.start();
    await enqueue(queue, taskOf('worker-quota-error'));
    const sunk = sink as InMemoryDispatchSink;
    await until('success', () => sunk.events.some((e) => e.status === 'succeeded'));
    expect(sunk.events.map((e) => e.status)).toEqual(['updated', 'started', 'succeeded']);
    assertEventLifecycle(sunk.events);
    expect(sunk.events[0]?.reason).toMatch(/runner error 1 of 3/);
    expect(runner.calls).toHaveLength(1);
  });

  it('tells a quota wait once, not at each re-check; a wait after a runner error is told again (ADR 0041)', async () => {
    const catalog = `worker-quiet-wait-${Math.random().toString(36).slice(2, 8)}`;
    // The quota has no room for the first re-checks, cannot be read once, has no room again,
    // then has room: a script of `room` answers, one per check.
    const full = { cpuMillicores: 1, memoryBytes: 1 };
    const answers: ('full' | 'error')[] = ['full', 'full', 'full', 'full', 'error'];
    answers.push('full', 'full', 'full');
    let checks = 0;
    const quota: QuotaGate = {
      ...roomyQuota,
      room: () => {
        const answer = answers[checks++];
        if (answer === 'error') return Promise.reject(new Error('connect ECONNREFUSED'));
        return Promise.resolve(answer === 'full' ? full : {});
      },
    };
    const waits: string[] = [];
    const runner = new ScriptedRunner([succeeds]);
    const { worker, queue, sink } = setup(catalog, runner, {
      quota,
      quotaWaitMs: 20,
      onWait: (kind) => waits.push(kind),
    });
    await worker.start();
    const task = taskOf(catalog);
    await enqueue(queue, task);
    const sunk = sink as InMemoryDispatchSink;
    await until('success', () => sunk.events.some((e) => e.status === 'succeeded'));

    // Seven checks found no room: three events, not nine — the wait's start, the runner error,
    // the wait's start after it — each with its reason.
    expect(checks).toBe(answers.length + 1);
    expect(statusesOf(sunk, task)).toEqual([
      'updated',
      'updated',
      'updated',
      'started',
      'succeeded',
    ]);
    const [wait, error, again] = sunk.events;
    expect(wait?.reason).toMatch(/^waiting for quota: quota has room for cpu 1m/);
    expect(error?.reason).toMatch(/runner error 1 of 3/);
    expect(again?.reason).toBe(wait?.reason);
    // The metrics still count every re-check (a long wait keeps `quota_waits` rising).
    expect(waits).toEqual(Array<string>(7).fill('quota'));
    assertEventLifecycle(sunk.events);
    expect(runner.calls).toHaveLength(1);
  });

  it('runs the best waiting task first once the quota has room: a wait for quota keeps the task’s place', async () => {
    const catalog = `worker-best-first-${Math.random().toString(36).slice(2, 8)}`;
    let full = true;
    const quota: QuotaGate = {
      ...roomyQuota,
      room: () => Promise.resolve(full ? { cpuMillicores: 1, memoryBytes: 1 } : {}),
    };
    const runner = new ScriptedRunner([succeeds, succeeds, succeeds]);
    const { worker, queue, sink } = setup(catalog, runner, { quota, quotaWaitMs: 2_000 });
    const sunk = sink as InMemoryDispatchSink;
    const tableTask = (name: string): Task =>
      sampleMergeTask({ table: sampleTableId({ catalog, namespace: ['db'], name }) });
    const [low, mid, best] = [tableTask('low'), tableTask('mid'), tableTask('best')];
    const toldWaiting = (task: Task) => () => statusesOf(sunk, task).includes('updated');
    await worker.start();
    // Two tasks wait while the catalog is full; a better one comes while they do.
    await enqueue(queue, low, 30);
    await enqueue(queue, mid, 20);
    await until('low and mid wait', () => toldWaiting(low)() && toldWaiting(mid)());
    // Well inside their wait: the better task's own wait ends well after theirs.
    await sleep(700);
    await enqueue(queue, best, 10);
    await until('best waits', toldWaiting(best));
    full = false;
    await until('all ran', () => sunk.events.filter((e) => e.status === 'succeeded').length === 3);

    const started = sunk.events.filter((e) => e.status === 'started').map((e) => e.taskId);
    expect(started).toEqual([best.id, mid.id, low.id]);
    assertEventLifecycle(sunk.events);
  });

  it('reports a run that ended before its dispatcher died, and does not run it again', async () => {
    const catalog = 'worker-ended';
    // The first dispatcher hangs right after it reported the outcome (as if killed there):
    // the job stays active until its lock lapses.
    const first = new InMemoryDispatchSink();
    const hangingSink: DispatchSink = {
      taskEvent: (event) => first.taskEvent(event),
      requestScan: () => new Promise<void>(() => undefined),
    };
    const one = setup(catalog, new ScriptedRunner([succeeds]), {
      sink: hangingSink,
      lockDurationMs: 1_000,
    });
    await one.worker.start();
    const task = taskOf(catalog);
    await enqueue(one.queue, task);
    await until('the first outcome', () => first.events.some((e) => e.status === 'succeeded'));
    await one.worker.close(true);
    // The next dispatcher's runner has forgotten the run (as after a SparkApplication's TTL).
    const forgetful = new ScriptedRunner([]);
    const two = setup(catalog, forgetful, { lockDurationMs: 1_000 });
    await two.worker.start();
    await until(
      'the job to be completed',
      async () => (await two.queue.getJob(task.id)) === undefined,
    );
    expect(forgetful.calls).toEqual([]);
    const second = two.sink as InMemoryDispatchSink;
    expect(second.events.map((e) => [e.status, e.runId])).toEqual([['succeeded', 'run-1']]);
    expect(second.events[0]?.before).toEqual(tableFigures);
    // The cost is the ended run's, as recorded when it ended: not the time until the re-report.
    const firstSucceeded = first.events.find((e) => e.status === 'succeeded');
    expect(second.events[0]?.cost).toEqual(firstSucceeded?.cost);
    expect(second.events[0]?.cost?.coreSecondsRequested).toBeGreaterThanOrEqual(0);
    // The repeated outcome is a repeat, not a new transition.
    assertEventLifecycle([...first.events, ...second.events]);
  });
});

const GiB = 1024 ** 3;

/** A merge of `name` rewriting `gib` GiB in `files` files: large from 1 GiB or 501 files. */
function sizedTask(catalog: string, name: string, gib: number, files = 40): Task {
  const task = sampleMergeTask({ table: sampleTableId({ catalog, namespace: ['db'], name }) });
  const bytesToRewrite = Math.round(gib * GiB);
  return { ...task, state: { ...task.state, bytesToRewrite, filesToRewrite: files } };
}

/**
 * Runs small tasks at once; holds a task's run while the test keeps it in `held` (a long
 * merge of a big table), and counts how many large runs go at once.
 */
class LaneRunner implements SparkRunner {
  readonly kind = 'lanes';
  /** Task ids whose run ended, in that order. */
  readonly ran: string[] = [];
  maxLargeAtOnce = 0;
  readonly #held = new Map<string, Promise<void>>();
  #large = 0;

  readonly large: ReadonlySet<string>;

  constructor(large: ReadonlySet<string>) {
    this.large = large;
  }

  runName(key: RunKey): string {
    return `run-${key.task.table.name}-${String(key.attempt)}`;
  }

  isLaunched(): Promise<boolean> {
    return Promise.resolve(false);
  }

  /** Keeps `taskId`'s run going until the returned function is called. */
  hold(taskId: string): () => void {
    let finish = (): void => undefined;
    this.#held.set(taskId, new Promise<void>((resolve) => (finish = resolve)));
    return () => finish();
  }

  async run(request: RunRequest): Promise<RunOutcome> {
    const large = this.large.has(request.task.id);
    if (large) this.maxLargeAtOnce = Math.max(this.maxLargeAtOnce, ++this.#large);
    try {
      await this.#held.get(request.task.id);
      this.ran.push(request.task.id);
      return { ok: true, reattached: false };
    } finally {
      if (large) this.#large -= 1;
    }
  }
}

const statusesOf = (sink: InMemoryDispatchSink, task: Task) =>
  sink.events.filter((e) => e.taskId === task.id).map((e) => e.status);

describe('TaskWorker lanes (ADR 0029)', () => {
  it('keeps small tasks flowing while a large one holds the only large slot; a second large one waits', async () => {
    const catalog = `worker-lanes-${Math.random().toString(36).slice(2, 8)}`;
    const big = sizedTask(catalog, 'cdc_orders', 40, 9_000);
    const second = sizedTask(catalog, 'cdc_payments', 12);
    const small = ['a', 'b', 'c'].map((name) => sizedTask(catalog, `small_${name}`, 0.01));
    const runner = new LaneRunner(new Set([big.id, second.id]));
    const finish = runner.hold(big.id);
    const { worker, queue, sink } = setup(catalog, runner, {
      binding: { slots: 1, smallSlots: 1 },
      quotaWaitMs: 50,
    });
    const sunk = sink as InMemoryDispatchSink;
    await worker.start();
    await enqueue(queue, big, 1);
    await until('the large task to start', () => statusesOf(sunk, big).includes('started'));
    // The second large task is ahead of the small ones in the queue (priority 1).
    await enqueue(queue, second, 1);
    for (const task of small) await enqueue(queue, task, 10);

    await until('every small task to succeed', () =>
      small.every((task) => statusesOf(sunk, task).includes('succeeded')),
    );
    // …while the large one still runs: its run is held, it has not ended.
    expect(statusesOf(sunk, big)).toEqual(['started']);
    expect(new Set(runner.ran)).toEqual(new Set(small.map((t) => t.id)));
    // The second large task found the large slot taken: it waits (delayed), it never started.
    await until('the second large task to wait for a large slot', () =>
      sunk.events.some((e) => e.taskId === second.id && e.reason === LARGE_SLOTS_BUSY),
    );
    expect(statusesOf(sunk, second).every((s) => s === 'updated')).toBe(true);
    // Marked as waiting for room only (its attempt 1), so a batch leader may take it along.
    expect(await redis.hget(`${prefix}:${queue.name}:${second.id}`, 'icepack:quota-wait')).toBe(
      '1',
    );
    expect(await new RedisLargeSlots({ redis }).inUse(testBinding(catalog))).toBe(1);

    finish();
    await until('the second large task to succeed after the first', () =>
      statusesOf(sunk, second).includes('succeeded'),
    );
    expect(runner.maxLargeAtOnce).toBe(1);
    expect(runner.ran.slice(-2)).toEqual([big.id, second.id]);
    // Both large runs released their slot.
    expect(await new RedisLargeSlots({ redis }).inUse(testBinding(catalog))).toBe(0);
    assertEventLifecycle(sunk.events.filter((e) => e.taskId === second.id));
  });

  it('frees a crashed dispatcher’s large slot once its lease lapses', async () => {
    const catalog = `worker-lanes-crash-${Math.random().toString(36).slice(2, 8)}`;
    const lanePrefix = `${prefix}-lanes`;
    const big = sizedTask(catalog, 'cdc_orders', 40);
    const next = sizedTask(catalog, 'cdc_payments', 12);
    const lease = { leaseMs: 1_000, claimRenewMs: 200 };
    // The first dispatcher: its own connection, cut when it "dies".
    const own = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
    const runnerOne = new LaneRunner(new Set([big.id, next.id]));
    runnerOne.hold(big.id); // never ends: the run outlives its dispatcher
    const one = setup(catalog, runnerOne, {
      binding: { slots: 1, smallSlots: 1 },
      connection: own,
      largeSlots: new RedisLargeSlots({ redis: own, prefix: lanePrefix, leaseMs: lease.leaseMs }),
      claimRenewMs: lease.claimRenewMs,
      // Long enough that the waiting task is not taken again before the crash.
      quotaWaitMs: 3_600_000,
      lockDurationMs: 1_000,
    });
    const first = one.sink as InMemoryDispatchSink;
    await one.worker.start();
    await enqueue(one.queue, big, 1);
    await until('the large task to start', () => statusesOf(first, big).includes('started'));
    await enqueue(one.queue, next, 1);
    await until('the second large task to wait for a large slot', () =>
      first.events.some((e) => e.taskId === next.id && e.reason === LARGE_SLOTS_BUSY),
    );
    const slots = new RedisLargeSlots({ redis, prefix: lanePrefix, leaseMs: lease.leaseMs });
    expect(await slots.inUse(testBinding(catalog))).toBe(1);

    // The dispatcher dies: it stops taking tasks and renewing anything.
    await one.worker.close(true);
    own.disconnect();
    // The next dispatcher gives the dead one's job up as stalled (maxStalledCount 0), so no one
    // will ever release its slot: only the lease frees it.
    const runnerTwo = new LaneRunner(new Set([big.id, next.id]));
    const two = setup(catalog, runnerTwo, {
      binding: { slots: 1, smallSlots: 1 },
      largeSlots: slots,
      claimRenewMs: lease.claimRenewMs,
      quotaWaitMs: 50,
      lockDurationMs: 1_000,
      maxStalledCount: 0,
    });
    const second = two.sink as InMemoryDispatchSink;
    await two.worker.start();
    await (await two.queue.getJob(next.id))?.promote(); // its wait is over
    await until('the second large task to succeed', () =>
      statusesOf(second, next).includes('succeeded'),
    );
    // The first large run never ended (it is still held), and nothing ran it again.
    expect(runnerTwo.ran).toEqual([next.id]);
    expect(statusesOf(second, big)).toEqual([]);
    expect(await slots.inUse(testBinding(catalog))).toBe(0);
  });
});

/**
 * Batches as a runner keeps them (ADR 0027): launched once per (batch run, attempt) — a later
 * request follows the launch — and each requested task's end found by its task id among the
 * launched tasks, as both real runners match results (`taskHash` of the id). A task the launch
 * did not hold is lost.
 */
class BatchBook {
  readonly launched = new Map<string, BatchRunRequest>();
  readonly requests: BatchRunRequest[] = [];

  static nameOf(key: Pick<BatchRunRequest, 'batchRun' | 'attempt'>): string {
    return `batch-${key.batchRun}-a${String(key.attempt)}`;
  }

  /** A dispatcher's runner on this book; `hang`: its batches never end (it is about to die). */
  runner(hang: boolean): SparkRunner {
    return {
      kind: 'batch-book',
      runName: (key) => `run-${key.task.table.name}-${String(key.attempt)}`,
      isLaunched: () => Promise.resolve(false),
      run: () => Promise.reject(new Error('a batched task was run alone')),
      batchName: (key) => BatchBook.nameOf(key),
      batchLocation: (key) => ({
        runner: 'batch-book',
        runId: BatchBook.nameOf(key),
        logs: [`/runs/${BatchBook.nameOf(key)}.log`],
      }),
      runBatch: async (request) => {
        this.requests.push(request);
        const name = BatchBook.nameOf(request);
        const earlier = this.launched.get(name);
        if (earlier === undefined) this.launched.set(name, request);
        if (hang) await new Promise<never>(() => undefined);
        const ran = new Set((earlier ?? request).tasks.map((t) => t.task.id));
        const lost: RunEnd = {
          ok: false,
          error: { kind: 'lost', message: 'not in the batch', retryable: true },
        };
        const outcome: BatchOutcome = {
          reattached: earlier !== undefined,
          ends: new Map<string, RunEnd>(
            request.tasks.map((t) => [
              t.taskRun,
              ran.has(t.task.id) ? { ok: true, figures: { durationMs: 1_000 } } : lost,
            ]),
          ),
        };
        return outcome;
      },
    };
  }
}

describe('TaskWorker batches (ADR 0027)', () => {
  it('after a crash, follows a held task’s batch with the data its job holds now (updated meanwhile), matched by task id; never launches it again', async () => {
    const catalog = `worker-batch-${Math.random().toString(36).slice(2, 8)}`;
    const leader = sizedTask(catalog, 'orders', 0.01);
    const held = sizedTask(catalog, 'items', 0.01);
    const book = new BatchBook();
    // One slot: the leader is taken, the other waits and is held for the leader's batch.
    const binding = { slots: 1, smallSlots: 0 };
    const own = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
    const one = setup(catalog, book.runner(true), {
      binding,
      connection: own,
      lockDurationMs: 1_000,
      batch: {},
    });
    const first = one.sink as InMemoryDispatchSink;
    await enqueue(one.queue, leader, 1);
    await enqueue(one.queue, held, 2);
    await one.worker.start();
    await until(
      'both tasks to start in one batch',
      () =>
        statusesOf(first, leader).includes('started') &&
        statusesOf(first, held).includes('started'),
    );
    await until('the batch to be launched', () => book.launched.size === 1);
    const [launch] = [...book.launched.values()];
    expect(launch?.tasks.map((t) => t.task)).toEqual([leader, held]);
    // Each task's job says where its run is: the batch (the console's queue page).
    for (const task of [leader, held]) {
      const recorded = await redis.hget(
        `${prefix}:${queueNameForCatalog(catalog)}:${task.id}`,
        JOB_RUN_LOCATION_FIELD,
      );
      expect(runLocationSchema.parse(JSON.parse(recorded ?? '{}')).runId).toBe(
        BatchBook.nameOf(launch!),
      );
    }

    // The dispatcher dies mid-batch. The held task's job gets new data, as the planner's update
    // of a waiting job does once the stall check has put it back: same task id, a newer state.
    await one.worker.close(true);
    own.disconnect();
    const updated: Task = {
      ...held,
      state: { ...held.state, snapshotId: '4242', bytesToRewrite: held.state.bytesToRewrite + 1 },
    };
    await (await one.queue.getJob(held.id))?.updateData(updated);

    const two = setup(catalog, book.runner(false), { binding, lockDurationMs: 1_000, batch: {} });
    const second = two.sink as InMemoryDispatchSink;
    await two.worker.start();
    await until(
      'both tasks to end after the restart',
      () =>
        statusesOf(second, leader).includes('succeeded') &&
        statusesOf(second, held).includes('succeeded'),
    );

    // One launch ever; each job followed it for its own task, the held one with its current data.
    expect(book.launched.size).toBe(1);
    const follows = book.requests.slice(1);
    expect(follows.map((r) => BatchBook.nameOf(r))).toEqual([
      BatchBook.nameOf(launch!),
      BatchBook.nameOf(launch!),
    ]);
    const heldFollow = follows.find((r) => r.tasks.some((t) => t.task.id === held.id));
    expect(heldFollow?.tasks.map((t) => t.task)).toEqual([updated]);
    // Its end is the batch's (matched by the unchanged id), reported once, no new start.
    expect(statusesOf(second, held)).toEqual(['succeeded']);
    expect(statusesOf(second, leader)).toEqual(['succeeded']);
    const runIds = second.events.map((e) => e.runId);
    expect(new Set(runIds)).toEqual(new Set([BatchBook.nameOf(launch!)]));
    assertEventLifecycle([...first.events, ...second.events].filter((e) => e.taskId === held.id));
  });
});
