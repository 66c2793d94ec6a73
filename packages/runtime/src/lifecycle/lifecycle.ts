import type { Logger } from 'pino';

export interface LifecycleOptions {
  readonly logger: Logger;
  /** Time all shutdown steps together get before the process gives up. Default 30 000 ms. */
  readonly timeoutMs?: number;
}

/** How a shutdown ended: every step finished (`clean`) or not. */
export interface ShutdownOutcome {
  readonly clean: boolean;
  readonly failed: readonly string[];
  readonly timedOut: boolean;
}

interface Step {
  readonly name: string;
  readonly fn: () => unknown;
}

/**
 * Shutdown steps, registered as resources are opened and run in reverse order, so what
 * was started last (the HTTP server, the consumers) stops first and the clients they use
 * close last. Each step is logged; one failing step does not stop the others.
 */
export class Lifecycle {
  #logger: Logger;
  #timeoutMs: number;
  readonly #steps: Step[] = [];
  readonly #aborter = new AbortController();
  #shutdown: Promise<ShutdownOutcome> | undefined;

  constructor(options: LifecycleOptions) {
    this.#logger = options.logger;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** Swap in the service's logger and timeout once its config is loaded. */
  configure(options: Partial<LifecycleOptions>): void {
    if (options.logger !== undefined) this.#logger = options.logger;
    if (options.timeoutMs !== undefined) this.#timeoutMs = options.timeoutMs;
  }

  get logger(): Logger {
    return this.#logger;
  }

  get shuttingDown(): boolean {
    return this.#shutdown !== undefined;
  }

  /** Aborted when shutdown begins: pass it to start-up retries and long waits. */
  get signal(): AbortSignal {
    return this.#aborter.signal;
  }

  onShutdown(name: string, fn: () => unknown): void {
    this.#steps.push({ name, fn });
  }

  /** Runs the steps once; later calls return the same outcome. */
  shutdown(reason: string): Promise<ShutdownOutcome> {
    if (this.#shutdown === undefined) this.#aborter.abort();
    this.#shutdown ??= this.#run(reason);
    return this.#shutdown;
  }

  async #run(reason: string): Promise<ShutdownOutcome> {
    const logger = this.#logger;
    logger.info({ reason, steps: this.#steps.length }, 'shutting down');
    const failed: string[] = [];
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.#timeoutMs);
    });
    const steps = async () => {
      for (const step of [...this.#steps].reverse()) {
        logger.info({ step: step.name }, 'shutdown step');
        try {
          await step.fn();
        } catch (error) {
          failed.push(step.name);
          logger.error({ step: step.name, err: error }, 'shutdown step failed');
        }
      }
      return 'done' as const;
    };
    const result = await Promise.race([steps(), timeout]);
    clearTimeout(timer);
    const timedOut = result === 'timeout';
    if (timedOut) logger.error({ timeoutMs: this.#timeoutMs }, 'shutdown timed out');
    const outcome = { clean: !timedOut && failed.length === 0, failed, timedOut };
    logger.info(outcome, 'shutdown finished');
    return outcome;
  }
}
