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
 * Values of `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` Icepack understands. The
 * standard's `prometheus` is `ICEPACK_PROMETHEUS=on` here (served on the service's port).
 */
export const OtlpExporterChoice = { otlp: 'otlp', none: 'none' } as const;
export type OtlpExporterChoice = (typeof OtlpExporterChoice)[keyof typeof OtlpExporterChoice];

/** `ICEPACK_KAFKA_SASL_MECHANISM`: how the Kafka clients authenticate (`none`: not at all). */
export const KafkaSaslMechanism = {
  none: 'none',
  plain: 'plain',
  scramSha256: 'scram-sha-256',
  scramSha512: 'scram-sha-512',
  oauthbearer: 'oauthbearer',
} as const;
export type KafkaSaslMechanism = (typeof KafkaSaslMechanism)[keyof typeof KafkaSaslMechanism];

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
    // Kafka transport security (docs/runtime.md#kafka-and-redis-transport-security).
    ICEPACK_KAFKA_TLS: flag().default(false),
    ICEPACK_KAFKA_TLS_CA_FILE: z.string().optional(),
    ICEPACK_KAFKA_TLS_CERT_FILE: z.string().optional(),
    ICEPACK_KAFKA_TLS_KEY_FILE: z.string().optional(),
    ICEPACK_KAFKA_SASL_MECHANISM: z
      .enum(KafkaSaslMechanism, {
        error: 'expected none, plain, scram-sha-256, scram-sha-512 or oauthbearer',
      })
      .default('none'),
    ICEPACK_KAFKA_SASL_USERNAME: z.string().optional(),
    ICEPACK_KAFKA_SASL_PASSWORD: secret(z.string()).optional(),
    ICEPACK_KAFKA_SASL_OAUTH_TOKEN_FILE: z.string().optional(),
    ICEPACK_REDIS_URL: secret(url(['redis', 'rediss'])),
    // Redis ACL user and TLS; a password in ICEPACK_REDIS_URL works as well.
    ICEPACK_REDIS_USERNAME: z.string().optional(),
    ICEPACK_REDIS_PASSWORD: secret(z.string()).optional(),
    ICEPACK_REDIS_TLS: flag().default(false),
    ICEPACK_REDIS_TLS_CA_FILE: z.string().optional(),
    ICEPACK_REDIS_TLS_CERT_FILE: z.string().optional(),
    ICEPACK_REDIS_TLS_KEY_FILE: z.string().optional(),
    ICEPACK_SHUTDOWN_TIMEOUT: duration().default(30_000),
    OTEL_EXPORTER_OTLP_ENDPOINT: url(['http', 'https']).optional(),
    // The standard OpenTelemetry variables (their meaning: docs/runtime.md). Headers,
    // certificates, timeout and compression (`OTEL_EXPORTER_OTLP_HEADERS`, …) are read by
    // the OTLP exporters themselves, so a collector's API key never enters this config.
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url(['http', 'https']).optional(),
    OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: url(['http', 'https']).optional(),
    OTEL_TRACES_EXPORTER: z.enum(OtlpExporterChoice, { error: 'expected otlp or none' }).optional(),
    OTEL_METRICS_EXPORTER: z
      .enum(OtlpExporterChoice, {
        error: 'expected otlp or none (Prometheus is ICEPACK_PROMETHEUS=on)',
      })
      .optional(),
    /** Milliseconds between OTLP metric pushes, as the standard has it. */
    OTEL_METRIC_EXPORT_INTERVAL: z.coerce
      .number({ error: 'expected milliseconds, e.g. 15000' })
      .int('expected whole milliseconds')
      .min(1_000, 'expected at least 1000 (milliseconds)')
      .optional(),
    ICEPACK_PROMETHEUS: flag().default(false),
    ICEPACK_PROMETHEUS_PORT: port().optional(),
  });
}

export type BaseConfig = z.output<ReturnType<typeof baseConfigSchema>>;
