import { describe, expect, it } from 'vitest';
import { KeyedSemaphore } from './keyed-semaphore.ts';

describe('KeyedSemaphore', () => {
  it('lets at most `limit` holders in per key, FIFO, and other keys pass', async () => {
    const semaphore = new KeyedSemaphore(2);
    const a1 = await semaphore.acquire('a');
    const a2 = await semaphore.acquire('a');
    const order: string[] = [];
    const a3 = semaphore.acquire('a').then((release) => (order.push('a3'), release));
    const a4 = semaphore.acquire('a').then((release) => (order.push('a4'), release));
    const b1 = await semaphore.acquire('b');
    expect(semaphore.held('a')).toBe(2);
    expect(semaphore.held('b')).toBe(1);
    a1();
    a1(); // a second release of the same slot changes nothing
    const r3 = await a3;
    expect(order).toEqual(['a3']);
    a2();
    const r4 = await a4;
    expect(order).toEqual(['a3', 'a4']);
    r3();
    r4();
    b1();
    expect(semaphore.held('a')).toBe(0);
    expect(semaphore.held('b')).toBe(0);
  });
});
