import { describe, expect, it } from 'vitest';
import { nextBatchSize } from './produce-batch.ts';

describe('nextBatchSize', () => {
  const limits = { maxMessages: 3, maxBytes: 100 };

  it('takes every queued send that fits, oldest first', () => {
    expect(nextBatchSize([10, 20], limits)).toBe(2);
    expect(nextBatchSize([10, 20, 30, 5], limits)).toBe(3);
    expect(nextBatchSize([40, 50, 20], limits)).toBe(2);
    expect(nextBatchSize([40, 60, 1], limits)).toBe(2);
  });

  it('sends a message larger than the byte bound alone, never none', () => {
    expect(nextBatchSize([500, 1], limits)).toBe(1);
    expect(nextBatchSize([1, 500], limits)).toBe(1);
    expect(nextBatchSize([], limits)).toBe(0);
  });
});
