import { resolvePolicy } from '@icepack/policy';
import { describe, expect, it } from 'vitest';
import { backOffMs, nextTryAt } from './back-off.ts';

const MINUTE = 60_000;
const { failureBackoff } = resolvePolicy({}).policy;

describe('backOffMs', () => {
  it('doubles from 5 minutes with each consecutive failure, up to 6 hours', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backOffMs(n, failureBackoff) / MINUTE)).toEqual([
      5, 10, 20, 40, 80, 160, 320,
    ]);
    expect(backOffMs(8, failureBackoff)).toBe(6 * 60 * MINUTE);
    expect(backOffMs(10_000, failureBackoff)).toBe(6 * 60 * MINUTE); // no overflow to Infinity
    expect(backOffMs(0, failureBackoff)).toBe(0);
  });

  it('follows the policy: icepack.failure-backoff and icepack.failure-backoff-max', () => {
    const { policy } = resolvePolicy({
      'icepack.failure-backoff': '1m',
      'icepack.failure-backoff-max': '3m',
    });
    expect([1, 2, 3].map((n) => backOffMs(n, policy.failureBackoff) / MINUTE)).toEqual([1, 2, 3]);
  });

  it('counts from the last failure', () => {
    const streak = { count: 2, lastFailedAt: '2026-01-02T00:00:00.000Z' };
    expect(nextTryAt(streak, failureBackoff)?.toISOString()).toBe('2026-01-02T00:10:00.000Z');
    expect(nextTryAt(undefined, failureBackoff)).toBeUndefined();
  });
});
