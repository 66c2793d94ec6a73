import type { TaskError } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import {
  afterFailedRun,
  afterRunnerError,
  afterUnknownRun,
  MAX_UNKNOWN_BACKOFF_MS,
} from './retry.ts';

const settings = { maxAttempts: 3, backoffMs: 30_000, timeoutMs: 6 * 3_600_000 };
const retryable: TaskError = { kind: 'spark', message: 'executor lost', retryable: true };
const fatal: TaskError = { kind: 'validation', message: 'table UUID changed', retryable: false };
const runner: TaskError = { kind: 'runner', message: 'connect ECONNREFUSED', retryable: true };

describe('afterFailedRun', () => {
  it('retries a retryable failure with doubling backoff while attempts are left', () => {
    expect(afterFailedRun(retryable, 1, settings)).toEqual({
      action: 'retry',
      delayMs: 30_000,
      reason: 'retry 2 of 3 in 30s',
    });
    expect(afterFailedRun(retryable, 2, settings)).toMatchObject({
      action: 'retry',
      delayMs: 60_000,
    });
  });

  it('gives up on the last attempt, and at once on a failure that is not retryable', () => {
    expect(afterFailedRun(retryable, 3, settings)).toEqual({ action: 'give-up', error: retryable });
    expect(afterFailedRun(fatal, 1, settings)).toEqual({ action: 'give-up', error: fatal });
  });
});

describe('afterRunnerError (before the run started)', () => {
  it('tries the same run again until maxAttempts errors in a row', () => {
    expect(afterRunnerError(runner, 2, settings)).toEqual({
      action: 'retry',
      delayMs: 60_000,
      reason: 'runner error 2 of 3: the same run again in 60s',
    });
    expect(afterRunnerError(runner, 3, settings)).toEqual({ action: 'give-up', error: runner });
  });
});

describe('afterUnknownRun (a started run whose state is unknown)', () => {
  it('follows it again with a backoff capped at 5 minutes, however many errors', () => {
    expect(afterUnknownRun(runner, 1, 0, settings)).toMatchObject({
      action: 'retry',
      delayMs: 30_000,
    });
    expect(afterUnknownRun(runner, 20, 60_000, settings)).toMatchObject({
      action: 'retry',
      delayMs: MAX_UNKNOWN_BACKOFF_MS,
    });
  });

  it('fails the task, not retryable, only once the timeout has passed since the attempt started', () => {
    expect(afterUnknownRun(runner, 1, settings.timeoutMs, settings)).toEqual({
      action: 'give-up',
      error: {
        kind: 'runner',
        retryable: false,
        message: 'run state unknown past the task timeout: connect ECONNREFUSED',
      },
    });
  });
});
