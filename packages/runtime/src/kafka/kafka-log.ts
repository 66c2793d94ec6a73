import { logLevel } from 'kafkajs';
import type { logCreator } from 'kafkajs';
import type { Logger } from 'pino';

/** Routes kafkajs's own log lines into the service's pino logger (never to the console). */
export function kafkaLogCreator(logger: Logger): logCreator {
  const child = logger.child({ component: 'kafkajs' });
  return () =>
    ({ namespace, level, log }) => {
      const { message, ...extra } = log;
      // pino writes its own time.
      const fields = { namespace, ...extra, timestamp: undefined };
      switch (level) {
        case logLevel.ERROR:
          child.error(fields, message);
          break;
        case logLevel.WARN:
          child.warn(fields, message);
          break;
        case logLevel.INFO:
          child.info(fields, message);
          break;
        case logLevel.DEBUG:
          child.debug(fields, message);
          break;
        case logLevel.NOTHING:
          break;
      }
    };
}

/** The kafkajs level matching a pino level, so `ICEPACK_LOG_LEVEL=debug` shows kafkajs debug. */
export function kafkaLogLevel(level: string): logLevel {
  switch (level) {
    case 'trace':
    case 'debug':
      return logLevel.DEBUG;
    case 'info':
      // kafkajs logs every group join and connect at info; that is noise for a service.
      return logLevel.WARN;
    case 'warn':
      return logLevel.WARN;
    case 'silent':
      return logLevel.NOTHING;
    default:
      return logLevel.ERROR;
  }
}
