import { describe, expect, it } from 'vitest';
import { Coalescer } from './coalescer.ts';

/** A coalescer that doubles numbers and records the batches it was given. */
function doubler(maxItems?: number) {
  const batches: number[][] = [];
  const coalescer = new Coalescer<number, number>((items) => {
    batches.push([...items]);
    return Promise.resolve(items.map((n) => n * 2));
  }, maxItems);
  return { coalescer, batches };
}

describe('Coalescer', () => {
  it('serves the calls of one turn with one batch, each caller its own answer', async () => {
    const { coalescer, batches } = doubler();
    const answers = await Promise.all([1, 2, 3].map((n) => coalescer.call(n)));
    expect(answers).toEqual([2, 4, 6]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('takes in calls made by continuations of that turn, and starts a new batch after it', async () => {
    const { coalescer, batches } = doubler();
    const first = coalescer.call(1);
    // A continuation queued in the same turn (as replies resumed together are).
    const chained = Promise.resolve().then(() => coalescer.call(2));
    expect(await Promise.all([first, chained])).toEqual([2, 4]);
    expect(await coalescer.call(3)).toBe(6);
    expect(batches).toEqual([[1, 2], [3]]);
  });

  it('sends a batch as soon as it holds maxItems', async () => {
    const { coalescer, batches } = doubler(2);
    const answers = await Promise.all([1, 2, 3, 4, 5].map((n) => coalescer.call(n)));
    expect(answers).toEqual([2, 4, 6, 8, 10]);
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it("fails every caller of a failed batch, and only that batch's", async () => {
    let fail = true;
    const coalescer = new Coalescer<number, number>((items) => {
      if (fail) {
        fail = false;
        return Promise.reject(new Error('connection lost'));
      }
      return Promise.resolve(items.map((n) => n + 1));
    });
    const failed = await Promise.allSettled([coalescer.call(1), coalescer.call(2)]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect((failed[0] as PromiseRejectedResult).reason).toHaveProperty(
      'message',
      'connection lost',
    );
    expect(await coalescer.call(3)).toBe(4);
  });

  it('fails the callers when the batch throws or answers the wrong number of items', async () => {
    const throwing = new Coalescer<number, number>(() => {
      throw new Error('bad arguments');
    });
    await expect(throwing.call(1)).rejects.toThrow('bad arguments');
    const short = new Coalescer<number, number>(() => Promise.resolve([1]));
    const results = await Promise.allSettled([short.call(1), short.call(2)]);
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    expect((results[0] as PromiseRejectedResult).reason).toHaveProperty(
      'message',
      'Coalescer: 1 answers for 2 calls',
    );
  });

  it('refuses a batch bound below one', () => {
    expect(() => new Coalescer(() => Promise.resolve([]), 0)).toThrow('maxItems');
  });
});
