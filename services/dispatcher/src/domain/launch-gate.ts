/** A held place in the {@link LaunchGate}; `release` gives it back once, later calls do nothing. */
export interface LaunchPermit {
  release(): void;
}

/** Default launches in flight per dispatcher process (ADR 0040). */
export const DEFAULT_MAX_LAUNCHES = 8;

/**
 * At most `limit` launches in flight in one dispatcher process, across all its catalogs
 * (ADR 0040): a task is taken off its queue only with a permit, so tasks the API server
 * cannot take promptly wait in the queue, where priority and supersession still apply.
 * Waiters are served in arrival order, so catalogs take turns; `tryAcquire` never jumps
 * ahead of a waiter.
 */
export class LaunchGate {
  readonly limit: number;
  #held = 0;
  readonly #waiters: ((permit: LaunchPermit) => void)[] = [];

  constructor(limit: number = DEFAULT_MAX_LAUNCHES) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be ≥ 1');
    this.limit = limit;
  }

  /** Permits held now (launches in flight). */
  get held(): number {
    return this.#held;
  }

  /**
   * Callers waiting for a permit now: a catalog worker's fetch (at most one per worker) and
   * runs retried after an unknown launch state.
   */
  get waiting(): number {
    return this.#waiters.length;
  }

  /** A permit if one is free and nobody waits; else none, at once. */
  tryAcquire(): LaunchPermit | undefined {
    if (this.#held >= this.limit || this.#waiters.length > 0) return undefined;
    this.#held += 1;
    return this.#permit();
  }

  /** A permit, after those who asked before; none if `signal` aborts first (a closing worker). */
  acquire(): Promise<LaunchPermit>;
  acquire(signal?: AbortSignal): Promise<LaunchPermit | undefined>;
  acquire(signal?: AbortSignal): Promise<LaunchPermit | undefined> {
    const now = this.tryAcquire();
    if (now !== undefined || signal?.aborted === true) return Promise.resolve(now);
    return new Promise((resolve) => {
      const grant = (permit: LaunchPermit): void => {
        signal?.removeEventListener('abort', abort);
        resolve(permit);
      };
      const abort = (): void => {
        const at = this.#waiters.indexOf(grant);
        if (at >= 0) this.#waiters.splice(at, 1);
        resolve(undefined);
      };
      signal?.addEventListener('abort', abort, { once: true });
      this.#waiters.push(grant);
    });
  }

  #permit(): LaunchPermit {
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const next = this.#waiters.shift();
        // The place passes straight to the next waiter: the count stays the same.
        if (next !== undefined) next(this.#permit());
        else this.#held -= 1;
      },
    };
  }
}
