/** How the REST client retries 429, 5xx, timeouts and connection errors. */
export interface RetryOptions {
  /** Attempts in all, the first included. Default: 4. */
  readonly maxAttempts?: number;
  /** First backoff step. Default: 200 ms. */
  readonly baseDelayMs?: number;
  /** Largest backoff, and largest Retry-After honoured. Default: 10 s / 60 s. */
  readonly maxDelayMs?: number;
  readonly maxRetryAfterMs?: number;
}

export interface ResolvedRetry {
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly maxRetryAfterMs: number;
}

export function resolveRetry(options: RetryOptions = {}): ResolvedRetry {
  return {
    maxAttempts: Math.max(1, options.maxAttempts ?? 4),
    baseDelayMs: options.baseDelayMs ?? 200,
    maxDelayMs: options.maxDelayMs ?? 10_000,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
  };
}

/**
 * Delay before retry number `attempt` (1 = first retry): the server's Retry-After when it
 * sent one (capped), else exponential backoff with full jitter (spreads a crowd of clients).
 */
export function retryDelayMs(
  retry: ResolvedRetry,
  attempt: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, retry.maxRetryAfterMs);
  const ceiling = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** Retry-After: delta seconds or an HTTP date. */
export function parseRetryAfter(
  value: string | null,
  nowMs: number = Date.now(),
): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
