import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoff.ts';

describe('backoffDelay', () => {
  it('doubles from the initial delay and stops at the cap', () => {
    const top = () => 1;
    expect([1, 2, 3, 4].map((a) => backoffDelay(a, { initialMs: 100, maxMs: 500 }, top))).toEqual([
      100, 200, 400, 500,
    ]);
    expect(backoffDelay(50, { initialMs: 100, maxMs: 500 }, top)).toBe(500);
  });

  it('keeps at least half the delay however the dice fall', () => {
    expect(backoffDelay(3, { initialMs: 100 }, () => 0)).toBe(200);
    expect(backoffDelay(3, { initialMs: 100 }, () => 0.5)).toBe(300);
  });
});
