import type { z } from 'zod';
import type { RedisOptions } from 'ioredis';
import type { baseConfigSchema, BaseConfig } from '../config/base-config.ts';
import { loadConfig } from '../config/load-config.ts';
import { redactConfig } from '../config/redact-config.ts';
import { createHttpServer, type HttpServer } from '../http/create-http-server.ts';
import type { ReadinessCheck } from '../http/readiness.ts';
import { readFileSync } from 'node:fs';
import { EnvelopeProducer } from '../kafka/envelope-producer.ts';
import { KafkaClient } from '../kafka/kafka-client.ts';
import { kafkaTransport } from '../kafka/kafka-transport.ts';
import { createLogger, type Logger } from '../logger/create-logger.ts';
import {
  createRedisConnection,
  type RedisConnection,
  type RedisRole,
} from '../redis/create-redis-connection.ts';
import { redisTransport } from '../redis/redis-transport.ts';
import { startTelemetry, type Telemetry } from '../telemetry/start-telemetry.ts';
import { telemetryOptions } from '../telemetry/telemetry-config.ts';
import type { Lifecycle } from './lifecycle.ts';

export interface ServiceCoreOptions {
  /** How the service uses its main Redis connection (BullMQ workers need `worker`). */
  readonly redisRole: RedisRole;
  /** Extra ioredis options for the main connection only (e.g. auto-pipelining). Default none. */
  readonly redisOptions?: RedisOptions;
}

/** What every Icepack service opens first; each part's shutdown is already registered. */
export interface ServiceCore<C extends BaseConfig> {
  readonly config: C;
  readonly telemetry: Telemetry;
  readonly logger: Logger;
  readonly kafka: KafkaClient;
  readonly redis: RedisConnection;
  /**
   * One more Redis connection (e.g. for a second BullMQ worker) with the config's auth and
   * TLS, and `redisOptions` on top (e.g. auto-pipelining). The caller closes it.
   */
  openRedis(role: RedisRole, connectionName: string, redisOptions?: RedisOptions): RedisConnection;
  /** Not connected yet: connect it with `retryUntil` once the HTTP server listens. */
  readonly producer: EnvelopeProducer;
  /** For `retryUntil`: logs with the service's logger, gives up when shutdown starts. */
  readonly retry: { readonly logger: Logger; readonly signal: AbortSignal };
  /**
   * The service's HTTP server on `ICEPACK_HTTP_PORT`: `/healthz`, `/readyz` (Kafka, Redis
   * and `readiness`), `/metrics` when Prometheus is on. Mount routers, then {@link listen}.
   */
  httpServer(readiness?: readonly ReadinessCheck[]): HttpServer;
  /** Listens and registers the server's shutdown (new requests stop, in-flight ones finish). */
  listen(http: HttpServer): Promise<void>;
}

/**
 * The start every composition root shares, in order: config (a bad variable stops the start,
 * naming it), telemetry (before any client, so their calls are traced), the logger, then
 * the Kafka client, the Redis connection and the envelope producer. None of the clients
 * needs its dependency up to be created: they connect and reconnect on their own while
 * `/readyz` reports what is missing. Shutdown runs the steps in reverse.
 */
export function openServiceCore<S extends ReturnType<typeof baseConfigSchema>>(
  lifecycle: Lifecycle,
  schema: S,
  options: ServiceCoreOptions,
): ServiceCore<z.output<S>> {
  const config = loadConfig(schema);
  const telemetry = startTelemetry(telemetryOptions(config));
  lifecycle.onShutdown('telemetry', () => telemetry.shutdown());
  const logger = createLogger({
    service: config.ICEPACK_SERVICE_NAME,
    level: config.ICEPACK_LOG_LEVEL,
  });
  lifecycle.configure({ logger, timeoutMs: config.ICEPACK_SHUTDOWN_TIMEOUT });
  logger.info({ config: redactConfig(config) }, 'starting');

  // Both throw a ConfigError naming the variable before anything connects.
  const readFile = (path: string) => readFileSync(path, 'utf8');
  const transport = kafkaTransport(config, readFile);
  const redisAuth = redisTransport(config, readFile);
  const kafka = new KafkaClient({
    brokers: config.ICEPACK_KAFKA_BROKERS,
    clientId: config.ICEPACK_KAFKA_CLIENT_ID ?? config.ICEPACK_SERVICE_NAME,
    logger,
    transport,
  });
  lifecycle.onShutdown('kafka client', () => kafka.close());
  const openRedis = (role: RedisRole, connectionName?: string, extra?: RedisOptions) =>
    createRedisConnection(config.ICEPACK_REDIS_URL, {
      role,
      logger,
      redis: { ...redisAuth, ...extra },
      ...(connectionName === undefined ? {} : { connectionName }),
    });
  const redis = openRedis(options.redisRole, undefined, options.redisOptions);
  lifecycle.onShutdown('redis', () => redis.close());
  const producer = new EnvelopeProducer(kafka, { tracer: telemetry.tracer });
  lifecycle.onShutdown('kafka producer', () => producer.disconnect());

  return {
    config,
    telemetry,
    logger,
    kafka,
    redis,
    openRedis,
    producer,
    retry: { logger, signal: lifecycle.signal },
    httpServer: (readiness = []) =>
      createHttpServer({
        port: config.ICEPACK_HTTP_PORT,
        host: config.ICEPACK_HTTP_HOST,
        logger,
        readiness: [
          { name: 'kafka', check: () => kafka.health() },
          { name: 'redis', check: () => redis.health() },
          ...readiness,
        ],
        ...(telemetry.metricsEndpoint === undefined ? {} : { metrics: telemetry.metricsEndpoint }),
      }),
    listen: async (http) => {
      await http.listen();
      lifecycle.onShutdown('http server', () => http.close());
    },
  };
}
