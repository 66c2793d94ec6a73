export interface BackoffOptions {
  /** Delay before the first retry. Default 100 ms. */
  readonly initialMs?: number;
  /** Largest delay. Default 30 000 ms. */
  readonly maxMs?: number;
  /** Growth per attempt. Default 2. */
  readonly factor?: number;
}

/**
 * Exponential backoff with "equal jitter": half the delay is fixed, half random, so a
 * fleet of clients retrying after the same outage spreads out but never retries instantly.
 * `attempt` counts from 1.
 */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions = {},
  random: () => number = Math.random,
): number {
  const initial = options.initialMs ?? 100;
  const max = options.maxMs ?? 30_000;
  const factor = options.factor ?? 2;
  const ceiling = Math.min(max, initial * factor ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** Resolves after `ms`, or early (without error) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
