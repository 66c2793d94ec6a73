export interface WaitUntilOptions {
  /** Give up after this long. Default 90 000 ms. */
  readonly timeoutMs?: number;
  /** Time between checks. Default 250 ms. */
  readonly intervalMs?: number;
  /** Context for the timeout error, e.g. a service's `describe()`. Default none. */
  readonly context?: () => string;
}

/** Checks until `check` holds; throws naming `what` (and the context) when time runs out. */
export async function waitUntil(
  what: string,
  check: () => boolean | Promise<boolean>,
  options: WaitUntilOptions = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 90_000);
  while (!(await check())) {
    if (Date.now() > deadline) {
      const context = options.context?.();
      throw new Error(`timed out waiting for ${what}${context ? `\n${context}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 250));
  }
}
