// The batch claims' Lua scripts on real Redis and BullMQ 6's key layout: the leader sees the
// waiting jobs in the order a worker takes them, holds only those that still wait and never
// started, and a held job is an ordinary active job that BullMQ completes with the token.
import { randomBytes } from 'node:crypto';
import { Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BatchClaims } from './batch-claims.ts';

const infra = inject('infra');
const prefix = `icepack-batch-claims-${randomBytes(3).toString('hex')}`;
const queueName = 'claims';
let redis: Redis;
let queue: Queue;

beforeAll(() => {
  redis = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
  queue = new Queue(queueName, { connection: redis, prefix });
});

afterAll(async () => {
  await queue.obliterate({ force: true });
  await queue.close();
  redis.disconnect();
});

describe('BatchClaims', () => {
  it('peeks in taking order, holds only waiting never-started jobs, as active jobs with the token', async () => {
    await queue.add('t', { n: 'a' }, { jobId: 'a', priority: 1 });
    await queue.add('t', { n: 'b' }, { jobId: 'b', priority: 2 });
    await queue.add('t', { n: 'c' }, { jobId: 'c', priority: 1 });
    await queue.add('t', { n: 'd' }, { jobId: 'd' });
    // `c` ran an attempt before (a stalled job back in the queue): it follows its own run.
    await redis.hset(`${prefix}:${queueName}:c`, 'icepack:started', '1');
    const claims = new BatchClaims(redis, prefix, queueName);

    const waiting = await claims.peek(10);
    expect(waiting.map((j) => [j.id, j.started])).toEqual([
      ['a', false],
      ['c', true],
      ['b', false],
      ['d', false],
    ]);
    expect(JSON.parse(waiting[0]!.data)).toEqual({ n: 'a' });
    expect((await claims.peek(2)).map((j) => j.id)).toEqual(['a', 'c']);

    const held = await claims.claim(['a', 'b', 'c', 'd', 'gone'], 'token-1', 30_000);
    expect(held).toEqual(['a', 'b', 'd']);
    for (const id of held) {
      expect(await queue.getJobState(id)).toBe('active');
      expect(await redis.get(`${prefix}:${queueName}:${id}:lock`)).toBe('token-1');
    }
    expect(await queue.getJobState('c')).toBe('prioritized');
    // Held once: a second leader gets none of them.
    expect(await claims.claim(['a', 'b'], 'token-2', 30_000)).toEqual([]);

    // BullMQ ends a held job as its own: completed with the holder's token.
    const a = await Job.fromId(queue, 'a');
    await a!.moveToCompleted({ ok: true }, 'token-1', false);
    expect(await queue.getJobState('a')).toBe('completed');
    const d = await Job.fromId(queue, 'd');
    await d!.moveToDelayed(Date.now() + 60_000, 'token-1');
    expect(await queue.getJobState('d')).toBe('delayed');
  });

  it('takes delayed jobs that wait only for the quota, never a retry waiting out its back-off', async () => {
    const q = `${prefix}-q`;
    const delayedQueue = new Queue(q, { connection: redis, prefix });
    const key = (id: string) => `${prefix}:${q}:${id}`;
    try {
      await delayedQueue.add('t', { n: 'w' }, { jobId: 'w' });
      for (const id of ['quota', 'retry', 'stale', 'started'])
        await delayedQueue.add('t', { n: id }, { jobId: id, delay: 60_000 });
      // Back in `delayed` because the catalog had no room, attempt 1 (the field's default).
      await redis.hset(key('quota'), 'icepack:quota-wait', '1');
      // A retry's back-off: no quota-wait field.
      // Waited for quota in attempt 1, now waits out the back-off of attempt 2.
      await redis.hset(key('stale'), 'icepack:quota-wait', '1', 'icepack:attempt', '2');
      // Its attempt started (a run may go on): followed by its own processing.
      await redis.hset(key('started'), 'icepack:quota-wait', '1', 'icepack:started', '1');
      const claims = new BatchClaims(redis, prefix, q);

      expect((await claims.peek(10)).map((j) => [j.id, j.started])).toEqual([
        ['w', false],
        ['quota', false],
        ['started', true],
      ]);
      const held = await claims.claim(
        ['w', 'quota', 'retry', 'stale', 'started'],
        'token-q',
        30_000,
      );
      expect(held).toEqual(['w', 'quota']);
      expect(await delayedQueue.getJobState('quota')).toBe('active');
      expect(await redis.hget(key('quota'), 'icepack:quota-wait')).toBeNull();
      for (const id of ['retry', 'stale', 'started'])
        expect(await delayedQueue.getJobState(id)).toBe('delayed');
      const quota = await Job.fromId(delayedQueue, 'quota');
      await quota!.moveToCompleted({ ok: true }, 'token-q', false);
      expect(await delayedQueue.getJobState('quota')).toBe('completed');
    } finally {
      await delayedQueue.obliterate({ force: true });
      await delayedQueue.close();
    }
  });
});
