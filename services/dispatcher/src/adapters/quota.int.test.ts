// The leased claims behind the local budget and the large-task slots, on real Redis: checked
// against the limits in one script, idempotent per claim id, and lapsing unless renewed.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RedisLargeSlots } from './large-slots.ts';
import { LocalBudgetQuota } from './quota.ts';
import { testBinding } from './testing/test-binding.ts';
import { until } from './testing/until.ts';

const infra = inject('infra');
const GiB = 2 ** 30;
const prefix = `icepack-claims-test-${randomBytes(3).toString('hex')}`;
let redis: Redis;

beforeAll(() => {
  redis = new Redis(infra.redisUrl);
});

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

/** Waits until `probe` holds; no timing assertion. */
describe('LocalBudgetQuota', () => {
  it('claims within the budget, counts a run once, refuses past it and frees on release', async () => {
    const binding = testBinding('budget', { cpu: '4', memory: '8Gi' });
    const quota = new LocalBudgetQuota({ redis, prefix });
    const job = { cpuMillicores: 2_000, memoryBytes: 3 * GiB };
    expect(await quota.acquire(binding, 'run-1', job)).toBe(true);
    // The same run again (a re-attach) does not count twice.
    expect(await quota.acquire(binding, 'run-1', job)).toBe(true);
    expect(await quota.room(binding)).toEqual({ cpuMillicores: 2_000, memoryBytes: 5 * GiB });
    expect(await quota.acquire(binding, 'run-2', job)).toBe(true);
    expect(await quota.acquire(binding, 'run-3', { cpuMillicores: 1, memoryBytes: 1 })).toBe(false);
    expect(await quota.usage(binding)).toMatchObject({
      cpu: { usedMillicores: 4_000, hardMillicores: 4_000 },
      memory: { usedBytes: 6 * GiB, hardBytes: 8 * GiB },
    });
    await quota.release(binding, 'run-1');
    expect(await quota.acquire(binding, 'run-3', job)).toBe(true);
  });
});

describe('RedisLargeSlots', () => {
  it('admits at most `slots` large runs; a run not renewed lapses, a renewed one stays', async () => {
    const binding = testBinding('slots', { slots: 2 });
    const slots = new RedisLargeSlots({ redis, prefix, leaseMs: 300 });
    expect(await slots.admit(binding, 'a#1')).toBe(true);
    expect(await slots.admit(binding, 'a#1')).toBe(true); // idempotent
    expect(await slots.admit(binding, 'b#1')).toBe(true);
    expect(await slots.admit(binding, 'c#1')).toBe(false);
    expect(await slots.inUse(binding)).toBe(2);
    // A run that runs already is counted whatever the limit.
    await slots.hold(binding, 'c#1');
    expect(await slots.inUse(binding)).toBe(3);
    await slots.release(binding, 'c#1');
    // `a` is renewed while `b` is not (its dispatcher died): `b` lapses, `a` stays.
    await until('b to lapse', async () => {
      await slots.renew(binding, 'a#1');
      return (await slots.inUse(binding)) === 1;
    });
    expect(await slots.admit(binding, 'd#1')).toBe(true);
    expect(await slots.admit(binding, 'e#1')).toBe(false);
    // A lapsed claim is not brought back by a late renewal.
    await slots.renew(binding, 'b#1');
    expect(await slots.inUse(binding)).toBe(2);
  });
});
