// The dispatcher's retry and give-up decisions: after a failed run, after a runner error
// before the run started, and while a started run's state is unknown. Pure; the task worker
// carries them out (delayed job, task events, BullMQ UnrecoverableError).
import type { TaskError } from '@icepack/types';
import type { ResourceStep } from './resource-failure.ts';

export interface RetrySettings {
  /** Runs of a task (first + retries after retryable failures). */
  readonly maxAttempts: number;
  /** Backoff before retry n: `backoffMs × 2^(n−1)`. */
  readonly backoffMs: number;
  /** Past this since a started attempt began, a run whose state is unknown fails the task. */
  readonly timeoutMs: number;
}

/** The most a run whose state is unknown waits between two looks at it. */
export const MAX_UNKNOWN_BACKOFF_MS = 5 * 60_000;

export type RetryDecision =
  | { readonly action: 'give-up'; readonly error: TaskError }
  | { readonly action: 'retry'; readonly delayMs: number; readonly reason: string };

const seconds = (ms: number): string => `${String(Math.round(ms / 1000))}s`;

/**
 * A run ended failed: a retryable failure with attempts left is tried again as attempt + 1
 * after `backoffMs × 2^(attempt−1)`; otherwise the task fails with the run's error.
 * `resource` (`resourceStep`): a run out of memory or time is tried again larger even when its
 * error alone is not retryable (a timeout), and fails, saying why, when it was at the group's
 * bound already — the same job again would fail the same way.
 */
export function afterFailedRun(
  error: TaskError,
  attempt: number,
  s: Pick<RetrySettings, 'maxAttempts' | 'backoffMs'>,
  resource?: ResourceStep,
): RetryDecision {
  if (resource?.action === 'at-bound') {
    return {
      action: 'give-up',
      error: { ...error, retryable: false, message: `${error.message} (${resource.reason})` },
    };
  }
  const retryable = error.retryable || resource?.action === 'grow';
  if (!retryable || attempt >= s.maxAttempts) return { action: 'give-up', error };
  const delayMs = s.backoffMs * 2 ** (attempt - 1);
  const larger = resource === undefined ? '' : `: ${resource.reason}`;
  return {
    action: 'retry',
    delayMs,
    reason: `retry ${String(attempt + 1)} of ${String(s.maxAttempts)} in ${seconds(delayMs)}${larger}`,
  };
}

/**
 * The runner failed before the attempt started (nothing runs): the same run again after a
 * backoff, until `maxAttempts` such errors in a row fail the task.
 */
export function afterRunnerError(
  error: TaskError,
  errorsInARow: number,
  s: Pick<RetrySettings, 'maxAttempts' | 'backoffMs'>,
): RetryDecision {
  if (errorsInARow >= s.maxAttempts) return { action: 'give-up', error };
  const delayMs = s.backoffMs * 2 ** (errorsInARow - 1);
  return {
    action: 'retry',
    delayMs,
    reason: `runner error ${String(errorsInARow)} of ${String(s.maxAttempts)}: the same run again in ${seconds(delayMs)}`,
  };
}

/**
 * A started attempt's run could not be launched or followed: its state is unknown and it may
 * still be going, so it counts as running and is followed again after a capped backoff —
 * never a new attempt beside a live run. Only once `timeoutMs` has passed since the attempt
 * started does the task fail, not retryable.
 */
export function afterUnknownRun(
  error: TaskError,
  errorsInARow: number,
  sinceStartMs: number,
  s: RetrySettings,
): RetryDecision {
  if (sinceStartMs >= s.timeoutMs) {
    return {
      action: 'give-up',
      error: {
        ...error,
        retryable: false,
        message: `run state unknown past the task timeout: ${error.message}`,
      },
    };
  }
  const delayMs = Math.min(
    s.backoffMs * 2 ** (errorsInARow - 1),
    Math.max(s.backoffMs, MAX_UNKNOWN_BACKOFF_MS),
  );
  return {
    action: 'retry',
    delayMs,
    reason: `runner error ${String(errorsInARow)}: the run's state is unknown; it counts as running and is followed again in ${seconds(delayMs)}`,
  };
}
