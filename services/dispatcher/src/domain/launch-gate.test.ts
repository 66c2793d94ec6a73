import { describe, expect, it } from 'vitest';
import { LaunchGate } from './launch-gate.ts';

describe('LaunchGate', () => {
  it('serves waiters in arrival order and passes a released place straight on', async () => {
    const gate = new LaunchGate(1);
    const first = gate.tryAcquire();
    const order: string[] = [];
    const b = gate.acquire().then((p) => (order.push('b'), p));
    const c = gate.acquire().then((p) => (order.push('c'), p));
    // A free place would not be taken past a waiter either.
    expect(gate.tryAcquire()).toBeUndefined();
    expect(gate.waiting).toBe(2);
    first?.release();
    first?.release(); // once only: the second call frees nothing
    (await b)?.release();
    await c;
    expect(order).toEqual(['b', 'c']);
    expect(gate.held).toBe(1);
  });

  it('gives up a wait when its signal aborts, keeping the others', async () => {
    const gate = new LaunchGate(1);
    const held = gate.tryAcquire();
    const closing = new AbortController();
    const gone = gate.acquire(closing.signal);
    const stays = gate.acquire();
    closing.abort();
    expect(await gone).toBeUndefined();
    expect(gate.waiting).toBe(1);
    held?.release();
    expect(await stays).toBeDefined();
    expect(await gate.acquire(closing.signal)).toBeUndefined();
  });

  it('refuses a limit below one', () => {
    expect(() => new LaunchGate(0)).toThrow(RangeError);
  });
});
