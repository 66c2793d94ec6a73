import { z } from 'zod';
import { duration } from './duration.ts';
import { flag, hostPortList, port, url } from './fields.ts';
import { secret } from './secret.ts';

export const LogLevel = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  info: 'info',
  debug: 'debug',
  trace: 'trace',
  silent: 'silent',
} as const;
export type LogLevel = (typeof LogLevel)[keyof typeof LogLevel];

/**
 * The variables every Icepack service reads. A service extends it with its own:
 * `loadConfig(baseConfigSchema('planner').extend({ … }))`.
 */
export function baseConfigSchema(serviceName: string) {
  return z.object({
    ICEPACK_SERVICE_NAME: z.string().default(serviceName),
    ICEPACK_LOG_LEVEL: z.enum(LogLevel).default('info'),
    ICEPACK_HTTP_PORT: port().default(8080),
    ICEPACK_HTTP_HOST: z.string().default('0.0.0.0'),
    ICEPACK_KAFKA_BROKERS: hostPortList(),
    ICEPACK_KAFKA_CLIENT_ID: z.string().optional(),
    ICEPACK_REDIS_URL: secret(url(['redis', 'rediss'])),
    ICEPACK_SHUTDOWN_TIMEOUT: duration().default(30_000),
    OTEL_EXPORTER_OTLP_ENDPOINT: url(['http', 'https']).optional(),
    ICEPACK_PROMETHEUS: flag().default(false),
    ICEPACK_PROMETHEUS_PORT: port().optional(),
  });
}

export type BaseConfig = z.output<ReturnType<typeof baseConfigSchema>>;
