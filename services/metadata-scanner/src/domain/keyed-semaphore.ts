/**
 * At most `limit` holders per key (per catalog): one slow or huge catalog cannot take
 * every scan slot of a process. Waiters are served in arrival order.
 */
export class KeyedSemaphore {
  readonly #limit: number;
  readonly #held = new Map<string, number>();
  readonly #waiting = new Map<string, (() => void)[]>();

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be ≥ 1');
    this.#limit = limit;
  }

  async acquire(key: string): Promise<() => void> {
    const held = this.#held.get(key) ?? 0;
    if (held < this.#limit) {
      this.#held.set(key, held + 1);
    } else {
      await new Promise<void>((resolve) => {
        const queue = this.#waiting.get(key) ?? [];
        queue.push(resolve);
        this.#waiting.set(key, queue);
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#release(key);
    };
  }

  /** Holders of `key` now. */
  held(key: string): number {
    return this.#held.get(key) ?? 0;
  }

  #release(key: string): void {
    const next = this.#waiting.get(key)?.shift();
    if (next !== undefined) {
      // The slot passes straight to the next waiter: the count stays the same.
      next();
      return;
    }
    if (this.#waiting.get(key)?.length === 0) this.#waiting.delete(key);
    const held = (this.#held.get(key) ?? 1) - 1;
    if (held === 0) this.#held.delete(key);
    else this.#held.set(key, held);
  }
}
