import type { Logger } from 'pino';
import { createLogger } from '../logger/create-logger.ts';
import { Lifecycle } from './lifecycle.ts';

export interface RunServiceOptions {
  /** Name on the start-up logger's lines. Default `ICEPACK_SERVICE_NAME`, else `icepack`. */
  readonly service?: string;
  /** Logs until the service configures its own. Default a JSON logger at level info. */
  readonly logger?: Logger;
  /** Shutdown deadline until the service configures its own. Default 30 000 ms. */
  readonly timeoutMs?: number;
  /** Signals that start a graceful shutdown. Default SIGTERM and SIGINT. */
  readonly signals?: readonly NodeJS.Signals[];
  /** Ends the process. Default `process.exit`. */
  readonly exit?: (code: number) => void;
}

/**
 * Runs a service's composition root. `main` opens resources and registers their shutdown
 * steps on the lifecycle, then returns while the service keeps running. A signal runs the
 * steps in reverse and exits 0 when all of them finished; a failure in `main`, an unhandled
 * rejection or an uncaught exception is logged as fatal, the steps run, and the exit code is 1.
 */
export function runService(
  main: (lifecycle: Lifecycle) => Promise<void>,
  options: RunServiceOptions = {},
): Lifecycle {
  const logger =
    options.logger ??
    createLogger({
      service: options.service ?? process.env.ICEPACK_SERVICE_NAME ?? 'icepack',
      level: 'info',
    });
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const lifecycle = new Lifecycle({ logger, timeoutMs: options.timeoutMs });

  const stop = (reason: string, failure: boolean) => {
    void lifecycle.shutdown(reason).then((outcome) => {
      exit(failure || !outcome.clean ? 1 : 0);
    });
  };
  const fatal = (kind: string) => (error: unknown) => {
    lifecycle.logger.fatal({ err: error }, kind);
    stop(kind, true);
  };

  for (const signal of options.signals ?? ['SIGTERM', 'SIGINT']) {
    process.once(signal, () => stop(signal, false));
  }
  process.on('unhandledRejection', fatal('unhandled rejection'));
  process.on('uncaughtException', fatal('uncaught exception'));

  main(lifecycle).then(
    () => lifecycle.logger.info('service started'),
    (error: unknown) => {
      // A signal during start-up aborts the retries in `main`: that is a clean stop.
      if (lifecycle.shuttingDown) {
        lifecycle.logger.info(
          { reason: (error as Error).message },
          'start-up interrupted by shutdown',
        );
        return;
      }
      fatal('service failed to start')(error);
    },
  );
  return lifecycle;
}
