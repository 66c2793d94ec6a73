import { waitUntil, type WaitUntilOptions } from '@icepack/runtime/testing';

/**
 * Checks until `probe` holds, for the dispatcher's integration tests: every 20 ms by default
 * (a worker's state in Redis changes within milliseconds, and tests step it many times), up to
 * 30 s; fails naming `what`. A bound, not a timed assertion. A test following real Spark runs
 * passes {@link SPARK_RUN_POLL}. Built on `@icepack/runtime/testing`'s `waitUntil`.
 */
export function until(
  what: string,
  probe: () => boolean | Promise<boolean>,
  options: WaitUntilOptions = {},
): Promise<void> {
  return waitUntil(what, probe, { intervalMs: 20, timeoutMs: 30_000, ...options });
}

/** For waits on real Spark runs on a busy two-core machine: every 200 ms, up to 20 min. */
export const SPARK_RUN_POLL: WaitUntilOptions = { intervalMs: 200, timeoutMs: 20 * 60_000 };
