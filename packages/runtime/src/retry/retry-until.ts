import type { Logger } from 'pino';
import { backoffDelay, sleep } from './backoff.ts';
import type { BackoffOptions } from './backoff.ts';

/** The operation was still being retried when shutdown began. */
export class ShutdownInProgressError extends Error {
  override name = 'ShutdownInProgressError';
}

export interface RetryUntilOptions extends BackoffOptions {
  /** What is being attempted, for the log ("connect to Kafka"). Required. */
  readonly what: string;
  readonly logger: Logger;
  /** Stops retrying; the call then rejects with {@link ShutdownInProgressError}. */
  readonly signal?: AbortSignal;
}

/**
 * Runs `fn` until it succeeds, waiting with capped, jittered backoff between attempts
 * (default 500 ms doubling to 30 s). For start-up steps against a dependency that may be
 * down: the service stays up, reports not-ready, and proceeds when the dependency returns.
 */
export async function retryUntil<T>(fn: () => Promise<T>, options: RetryUntilOptions): Promise<T> {
  const backoff = {
    initialMs: options.initialMs ?? 500,
    maxMs: options.maxMs ?? 30_000,
    factor: options.factor,
  };
  for (let attempt = 1; ; attempt++) {
    if (options.signal?.aborted === true)
      throw new ShutdownInProgressError(`shutdown while trying to ${options.what}`);
    try {
      return await fn();
    } catch (error) {
      const delayMs = backoffDelay(attempt, backoff);
      options.logger.warn({ err: error, attempt, delayMs }, `could not ${options.what}; retrying`);
      await sleep(delayMs, options.signal);
    }
  }
}
