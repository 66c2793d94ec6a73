import { pino } from 'pino';
import type { DestinationStream, Logger } from 'pino';
import type { LogLevel } from '../config/base-config.ts';

export type { Logger } from 'pino';

/**
 * Paths whose values never reach a log line. Wildcards match one level, so secrets nested
 * one or two objects deep (`{catalog: {auth: {token}}}`) are covered too.
 */
export const REDACTED_PATHS: readonly string[] = [
  'password',
  '*.password',
  '*.*.password',
  'token',
  '*.token',
  '*.*.token',
  'secret',
  '*.secret',
  '*.*.secret',
  'credential',
  '*.credential',
  '*.*.credential',
  'authorization',
  '*.authorization',
  '*.headers.authorization',
  '*.headers.cookie',
  'apiKey',
  '*.apiKey',
  'clientSecret',
  '*.clientSecret',
  // ioredis attaches the failed command to its errors: a refused AUTH carries the password.
  'err.command.args',
  '*.err.command.args',
];

export interface LoggerOptions {
  /** Service name, written as `service` on every line. Required. */
  readonly service: string;
  /** Minimum level written. Default `info`. */
  readonly level?: LogLevel;
  /** Extra paths to redact, on top of {@link REDACTED_PATHS}. Default none. */
  readonly redact?: readonly string[];
  /** Where lines go. Default stdout (synchronous, so nothing is lost on exit). */
  readonly destination?: DestinationStream;
}

/** JSON lines with `level` as a label, ISO time, `service`, and secrets redacted. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: options.service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: [...REDACTED_PATHS, ...(options.redact ?? [])], censor: '[redacted]' },
    },
    options.destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

/** Identifiers that tie log lines to a table and a task. */
export interface LogContext {
  readonly tableId?: string;
  readonly taskId?: string;
  readonly catalog?: string;
  readonly traceId?: string;
}

/** A child logger that writes the given ids on every line. */
export function withContext(logger: Logger, context: LogContext): Logger {
  const bindings: Record<string, string> = {};
  for (const [key, value] of Object.entries(context)) {
    if (typeof value === 'string') bindings[key] = value;
  }
  return logger.child(bindings);
}
