/**
 * Thrown by a handler for a message it can never handle (it refers to something that does
 * not exist, its content breaks a rule): the message goes to the DLQ at once instead of
 * being retried. Any other error is treated as transient and retried.
 */
export class UnrecoverableMessageError extends Error {
  override name = 'UnrecoverableMessageError';
  readonly retryable = false;
}

/** True for errors that retrying cannot fix: ours, a `ValidationError`, or `retryable: false`. */
export function isUnrecoverable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'ValidationError') return true;
  return (error as { retryable?: unknown }).retryable === false;
}
