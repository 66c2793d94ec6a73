// The launch gate (ADR 0040) against the real Redis: several catalog workers of one process
// share N permits; a task is taken off its queue only with one, so at most N tasks are
// active and not yet submitted, and a task enqueued later with a higher priority is launched
// before the tasks still waiting. The runner holds each submission until the test lets it go.
import { createLogger } from '@icepack/runtime';
import { queueNameForCatalog, sampleMergeTask, sampleTableId, type Task } from '@icepack/types';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { LaunchGate } from '../domain/launch-gate.ts';
import type { RunKey, RunOutcome, RunRequest, SparkRunner } from '../runners/spark-runner.ts';
import { InMemoryDispatchSink } from './task-events.ts';
import { TaskWorker, type TaskWorkerOptions } from './task-worker.ts';
import { roomyQuota, tableFigures } from './testing/fixtures.ts';
import { testBinding } from './testing/test-binding.ts';
import { until } from './testing/until.ts';

const infra = inject('infra');
const prefix = `icepack-gate-test-${Math.random().toString(36).slice(2, 8)}`;
const logger = createLogger({ service: 'gated-worker-test', level: 'silent' });

/** Submits a run only when the test lets it (`submitOne`); the run then ends at once. */
class HeldSubmitRunner implements SparkRunner {
  readonly kind = 'held-submit';
  /** Task ids in the order their runs were asked for (launched). */
  readonly launches: string[] = [];
  readonly submitted = new Set<string>();
  /** Most runs asked for and not yet submitted at once. */
  maxOutstanding = 0;
  readonly #held: (() => void)[] = [];

  get held(): number {
    return this.#held.length;
  }

  runName(key: RunKey): string {
    return `run-${key.taskRun}-${String(key.attempt)}`;
  }

  isLaunched(): Promise<boolean> {
    return Promise.resolve(false);
  }

  async run(request: RunRequest): Promise<RunOutcome> {
    this.launches.push(request.task.id);
    this.maxOutstanding = Math.max(this.maxOutstanding, this.launches.length - this.submitted.size);
    await new Promise<void>((submit) => this.#held.push(submit));
    this.submitted.add(request.task.id);
    request.onSubmitted?.();
    return { ok: true, reattached: false };
  }

  submitOne(): void {
    this.#held.shift()?.();
  }
}

/**
 * As {@link HeldSubmitRunner}, but the first run of each task in `failing` fails before its
 * submission with its state unknown (an unreachable API server); the retry then blocks in
 * submit like any run. Counts the submits in progress at once.
 */
class UnknownOnceRunner extends HeldSubmitRunner {
  readonly #failing: Set<string>;
  /** Runs that failed with an unknown state. */
  failures = 0;
  /** Most runs in their submission at once. */
  maxSubmitting = 0;

  constructor(failing: readonly string[]) {
    super();
    this.#failing = new Set(failing);
  }

  override async run(request: RunRequest): Promise<RunOutcome> {
    if (this.#failing.delete(request.task.id)) {
      this.failures += 1;
      throw new Error('connect ECONNREFUSED: the API server is unreachable');
    }
    const outcome = super.run(request);
    this.maxSubmitting = Math.max(this.maxSubmitting, this.held);
    return outcome;
  }
}

let redis: Redis;
const open: { worker: TaskWorker; queue: Queue }[] = [];

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

function catalogWorker(
  catalog: string,
  runner: SparkRunner,
  gate: LaunchGate,
  options: Partial<TaskWorkerOptions> = {},
) {
  const worker = new TaskWorker({
    // Four slots, no small-task lane: without the gate each worker takes four tasks at once.
    binding: testBinding(catalog, { slots: 4, smallSlots: 0 }),
    connection: redis,
    runner,
    quota: roomyQuota,
    sink: new InMemoryDispatchSink(),
    health: { read: () => Promise.resolve(tableFigures) },
    catalog: { name: catalog, uri: 'http://127.0.0.1:1' },
    logger,
    prefix,
    launchGate: gate,
    ...options,
  });
  const queue = new Queue(queueNameForCatalog(catalog), { connection: redis, prefix });
  open.push({ worker, queue });
  return { worker, queue };
}

function taskOf(catalog: string, name: string): Task {
  return sampleMergeTask({ table: sampleTableId({ catalog, namespace: ['db'], name }) });
}

async function enqueue(queue: Queue, task: Task, priority: number): Promise<void> {
  await queue.add(task.type, task, { jobId: task.id, priority, removeOnComplete: true });
}

/** Jobs of the queues that are active in Redis and whose run is not yet submitted. */
async function inFlight(queues: readonly Queue[], submitted: ReadonlySet<string>): Promise<number> {
  let count = 0;
  for (const queue of queues)
    for (const job of await queue.getActive()) if (!submitted.has(String(job.id))) count += 1;
  return count;
}

describe('the launch gate', () => {
  it('keeps at most N tasks of the process taken and not yet submitted; a later urgent task overtakes those still waiting', async () => {
    const gateSize = 3;
    const gate = new LaunchGate(gateSize);
    const runner = new HeldSubmitRunner();
    const catalogs = ['a', 'b', 'c'].map(
      (c) => `gate${Math.random().toString(36).slice(2, 7)}${c}`,
    );
    const workers = catalogs.map((catalog) => catalogWorker(catalog, runner, gate));
    const queues = workers.map((w) => w.queue);
    const perCatalog = 5;
    for (const [i, { queue }] of workers.entries())
      for (let n = 0; n < perCatalog; n += 1)
        await enqueue(queue, taskOf(catalogs[i]!, `t${String(n)}`), 10);
    for (const { worker } of workers) await worker.start();

    // The first N launches are held at their submission: nothing else may be taken.
    await until('the first launches', () => runner.held >= gateSize);
    expect(runner.held).toBe(gateSize);
    expect(await inFlight(queues, runner.submitted)).toBe(gateSize);

    // An urgent task of the first catalog arrives while the others wait in their queues.
    const [urgentQueue] = queues;
    const urgent = taskOf(catalogs[0]!, 'urgent');
    const waitingBefore = (await urgentQueue!.getPrioritized()).map((job) => String(job.id));
    expect(waitingBefore.length).toBeGreaterThan(0);
    await enqueue(urgentQueue!, urgent, 1);
    const launchedBefore = runner.launches.length;

    const total = catalogs.length * perCatalog + 1;
    while (runner.submitted.size < total) {
      expect(await inFlight(queues, runner.submitted)).toBeLessThanOrEqual(gateSize);
      const submitted = runner.submitted.size;
      runner.submitOne();
      await until('the submission', () => runner.submitted.size === submitted + 1);
      const left = total - runner.submitted.size;
      await until('the gate refilled', () => runner.held >= Math.min(gateSize, left));
      expect(runner.held).toBeLessThanOrEqual(gateSize);
    }

    // Every task ran exactly once and no job is left behind.
    expect(runner.launches).toHaveLength(total);
    expect(new Set(runner.launches).size).toBe(total);
    expect(runner.maxOutstanding).toBeLessThanOrEqual(gateSize);
    await until('the queues drained', async () => {
      for (const queue of queues) {
        const counts = await queue.getJobCounts(
          'active',
          'wait',
          'prioritized',
          'delayed',
          'failed',
        );
        if (Object.values(counts).some((n) => n > 0)) return false;
      }
      return true;
    });
    // The urgent task was the first of its catalog launched after it arrived: the tasks that
    // were waiting then had not been taken (locked) yet, so priority still applied to them.
    const afterwards = runner.launches.slice(launchedBefore);
    const firstOfItsCatalog = afterwards.find(
      (id) => id === urgent.id || waitingBefore.includes(id),
    );
    expect(firstOfItsCatalog).toBe(urgent.id);
  });

  it('makes the retry after an unknown launch state wait for a permit before it submits again', async () => {
    const gate = new LaunchGate(1);
    const catalog = `gate${Math.random().toString(36).slice(2, 7)}u`;
    const flaky = taskOf(catalog, 'flaky');
    const other = taskOf(catalog, 'other');
    const runner = new UnknownOnceRunner([flaky.id]);
    const { worker, queue } = catalogWorker(catalog, runner, gate, { backoffMs: 50 });
    await enqueue(queue, flaky, 1);
    await enqueue(queue, other, 10);
    await worker.start();

    // The flaky launch fails with its state unknown and gives its permit back for its
    // back-off; the other task takes it and holds it in its submission.
    await until('the unknown launch state', () => runner.failures === 1);
    await until('the other task submits', () => runner.held === 1);
    // After its back-off the flaky task launches again: beside the other one's submission
    // (the bug), or only once it has a permit — then it waits for one, as does the worker's
    // next fetch.
    await until('the retry launches or waits', () => runner.held === 2 || gate.waiting === 2);
    expect(runner.maxSubmitting).toBeLessThanOrEqual(1);

    runner.submitOne();
    await until('the retry submits', () => runner.held === 1);
    expect(runner.maxSubmitting).toBeLessThanOrEqual(1);
    runner.submitOne();
    await until('both tasks done', async () => {
      const counts = await queue.getJobCounts('active', 'wait', 'prioritized', 'delayed');
      return Object.values(counts).every((n) => n === 0);
    });
    expect(runner.launches).toEqual([other.id, flaky.id]);
    expect(runner.submitted).toEqual(new Set([other.id, flaky.id]));
    // Every permit went back exactly once: none held, none counted twice.
    await until('the permits are back', () => gate.held === 0);
    expect(runner.maxSubmitting).toBe(1);
  });

  it('closes a worker that waits for a permit, leaving its tasks queued', async () => {
    const gate = new LaunchGate(1);
    const runner = new HeldSubmitRunner();
    const [h, w] = ['h', 'w'].map((c) => `gate${Math.random().toString(36).slice(2, 7)}${c}`);
    const holder = catalogWorker(h!, runner, gate);
    const waiter = catalogWorker(w!, runner, gate);
    await enqueue(holder.queue, taskOf(h!, 'one'), 10);
    await holder.worker.start();
    await until('the holder launches', () => runner.held === 1);
    await enqueue(waiter.queue, taskOf(w!, 'two'), 10);
    await waiter.worker.start();
    // Both workers wait: the holder's next fetch too (its queue is empty, but it cannot know
    // before it looks, and it looks only with a permit).
    await until('the waiter waits for the permit', () => gate.waiting === 2);

    await waiter.worker.close();
    expect(gate.waiting).toBe(1);
    expect(await waiter.queue.getJobCounts('prioritized', 'active')).toEqual({
      prioritized: 1,
      active: 0,
    });
    runner.submitOne();
    await until('the holder’s task ended', async () => (await holder.queue.getActiveCount()) === 0);
    await until('the permit is back', () => gate.held === 0);
  });
});
