import { randomUUID } from 'node:crypto';
import { createLogger } from '@icepack/runtime';
import { InMemoryMetrics } from '@icepack/runtime/testing';
import {
  BULLMQ_PREFIX,
  queueNameForCatalog,
  sampleMergeTask,
  sampleTableId,
  type Task,
} from '@icepack/types';
import { Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, beforeAll, afterAll, describe, expect, inject, it } from 'vitest';
import { QueueDepth } from './adapters/queue-depth.ts';
import { TaskQueue } from './adapters/task-queue.ts';
import { DEFAULT_SCORE_OPTIONS } from './domain/score.ts';

// The queue gauges against a real Redis and real BullMQ moves (a worker taking a job, a
// retry backoff, a removal), with tasks of known creation times and a fixed clock.

const infra = inject('infra');
const logger = createLogger({ service: 'queue-depth-test', level: 'silent' });
const NOW = new Date('2026-06-01T12:00:00.000Z');
const ago = (minutes: number) => new Date(NOW.getTime() - minutes * 60_000).toISOString();
const AGE = 'icepack.planner.oldest_task.age.seconds';

let redis: Redis;
beforeAll(async () => {
  redis = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
  await redis.ping();
});
afterAll(() => redis.quit());

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
  cleanup.length = 0;
});

/** A unique catalog with its queue, the gauges on an in-memory meter, and a manual worker. */
function setup() {
  const catalog = `qd-${randomUUID().slice(0, 8)}`;
  const queue = new TaskQueue({ connection: redis });
  const metrics = new InMemoryMetrics();
  const depth = new QueueDepth({
    queue,
    catalogs: () => Promise.resolve([catalog]),
    meter: metrics.meter,
    logger,
    clock: () => NOW,
  });
  const workerConnection = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
  // No processor: the test takes jobs itself (`getNextJob`), as a dispatcher would.
  const worker = new Worker(queueNameForCatalog(catalog), null, {
    connection: workerConnection,
    prefix: BULLMQ_PREFIX,
  });
  cleanup.push(async () => {
    await worker.close();
    await workerConnection.quit();
    await queue.queue(catalog).obliterate({ force: true });
    await queue.close();
    await metrics.shutdown();
  });
  const task = (name: string, createdAt: string, priority: number): Task =>
    sampleMergeTask({
      table: sampleTableId({ catalog, name }),
      createdAt,
      score: { priority, total: 100, parts: [] },
    });
  /** Measures now and reads the age gauge of the catalog. */
  const age = async () => {
    await depth.measure();
    return metrics.value(AGE, { catalog });
  };
  const waiting = () => metrics.value('icepack.planner.queue.tasks', { catalog, state: 'waiting' });
  return { catalog, queue, worker, task, age, waiting, redis };
}

describe('oldest waiting task age', () => {
  it('is the age of the oldest task that waits: not one that runs, again one put back, 0 when none waits', async () => {
    const { queue, worker, task, age, waiting } = setup();
    const first = task('first', ago(180), 10); // created first, runs first
    const second = task('second', ago(60), 20);
    const third = task('third', ago(10), 30);
    for (const t of [third, first, second]) expect(await queue.create(t)).toBe(true);

    expect(await age()).toBe(3 * 3600);
    expect(await waiting()).toBe(3);

    // A dispatcher takes the first: it runs, the next oldest waits.
    const token = randomUUID();
    const running = (await worker.getNextJob(token)) as Job | undefined;
    expect(running?.id).toBe(first.id);
    expect(await age()).toBe(3600);

    // Its run failed and it waits for a retry backoff (delayed): it waits again.
    await running?.moveToDelayed(NOW.getTime() + 3_600_000, token);
    expect(await age()).toBe(3 * 3600);

    // Removed (as a finished job is): the next oldest again.
    await queue.queue(first.table.catalog).remove(first.id);
    expect(await age()).toBe(3600);

    for (const t of [second, third]) await queue.queue(t.table.catalog).remove(t.id);
    expect(await age()).toBe(0);
  });

  it('counts a task waiting for quota (delayed by the dispatcher) and an updated task by its creation', async () => {
    const { queue, worker, task, age } = setup();
    const old = task('old', ago(400), 10);
    await queue.create(old);
    await queue.create(task('young', ago(5), 20));
    const token = randomUUID();
    const job = (await worker.getNextJob(token)) as Job | undefined;
    await job?.moveToDelayed(NOW.getTime() + 60_000, token); // no room in the quota
    // The planner updates the waiting task (new figures, same createdAt, higher priority).
    expect(await queue.update({ ...old, score: { ...old.score, priority: 5 } })).toBe('updated');
    expect(await age()).toBe(400 * 60);
  });

  it('finds a task enqueued without the index once the aging pass has seen it', async () => {
    const { catalog, queue, task, age } = setup();
    const legacy = task('legacy', ago(300), 10);
    // As a planner before the index did: the job only.
    await queue.queue(catalog).add(legacy.type, legacy, {
      jobId: legacy.id,
      priority: legacy.score.priority,
    });
    expect(await age()).toBe(0);
    await queue.age(catalog, NOW, DEFAULT_SCORE_OPTIONS);
    expect(await age()).toBe(300 * 60);
  });

  it('drops a backlog of finished tasks over several measurements, keeping the last age meanwhile', async () => {
    const { catalog, queue, task, age, redis } = setup();
    const waitingTask = task('waiting', ago(90), 10);
    await queue.create(waitingTask);
    expect(await age()).toBe(90 * 60);
    // 1 500 tasks that finished while nobody measured (their jobs are gone), all older.
    const index = `${BULLMQ_PREFIX}:${queueNameForCatalog(catalog)}:icepack:created`;
    const gone = Array.from({ length: 1500 }, (_, i) => [
      Date.parse(ago(1000)) + i,
      `merge/gone-${String(i)}`,
    ]).flat();
    await redis.zadd(index, ...gone);
    // Then an older task than the one measured: its entry comes after the backlog.
    await queue.create(task('older', ago(120), 20));

    expect(await age()).toBe(90 * 60); // budget spent on 1 000 gone entries: the last age
    expect(await age()).toBe(120 * 60); // the other 500 dropped, then the answer
    expect(await redis.zcard(index)).toBe(2);
  });
});
