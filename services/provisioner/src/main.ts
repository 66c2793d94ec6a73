// Composition root of the provisioner: config → telemetry → logger → clients → HTTP → start → drain.
import { TopicSpecs } from '@icepack/types';
import {
  createHttpServer,
  createLogger,
  createRedisConnection,
  EnvelopeProducer,
  ensureTopics,
  KafkaClient,
  loadConfig,
  redactConfig,
  requireBearerToken,
  retryUntil,
  runService,
  startTelemetry,
} from '@icepack/runtime';
import { configSchema } from './config.ts';

runService(
  async (lifecycle) => {
    const config = loadConfig(configSchema);
    const telemetry = startTelemetry({
      serviceName: config.ICEPACK_SERVICE_NAME,
      otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
      prometheus: config.ICEPACK_PROMETHEUS ? { port: config.ICEPACK_PROMETHEUS_PORT } : undefined,
    });
    lifecycle.onShutdown('telemetry', () => telemetry.shutdown());
    const logger = createLogger({
      service: config.ICEPACK_SERVICE_NAME,
      level: config.ICEPACK_LOG_LEVEL,
    });
    lifecycle.configure({ logger, timeoutMs: config.ICEPACK_SHUTDOWN_TIMEOUT });
    logger.info({ config: redactConfig(config) }, 'starting');

    // Clients. None of them needs its dependency up to be created: they connect and
    // reconnect on their own while /readyz reports what is missing.
    const kafka = new KafkaClient({
      brokers: config.ICEPACK_KAFKA_BROKERS,
      clientId: config.ICEPACK_KAFKA_CLIENT_ID ?? config.ICEPACK_SERVICE_NAME,
      logger,
    });
    lifecycle.onShutdown('kafka client', () => kafka.close());
    const redis = createRedisConnection(config.ICEPACK_REDIS_URL, { role: 'client', logger });
    lifecycle.onShutdown('redis', () => redis.close());
    const producer = new EnvelopeProducer(kafka, { tracer: telemetry.tracer });
    lifecycle.onShutdown('kafka producer', () => producer.disconnect());

    const http = createHttpServer({
      port: config.ICEPACK_HTTP_PORT,
      host: config.ICEPACK_HTTP_HOST,
      logger,
      readiness: [
        { name: 'kafka', check: () => kafka.health() },
        { name: 'redis', check: () => redis.health() },
      ],
      metrics: telemetry.metricsEndpoint,
    });
    // Everything under /v1 needs the token; health and metrics stay open for probes.
    http.app.use('/v1', requireBearerToken(config.ICEPACK_API_TOKEN));
    await http.listen();
    lifecycle.onShutdown('http server', () => http.close());

    const retry = { logger, signal: lifecycle.signal };
    // The control plane owns the topic layout; other services only read and write.
    await retryUntil(
      () =>
        ensureTopics(
          kafka,
          Object.values(TopicSpecs).map((spec) => ({
            name: spec.name,
            cleanupPolicy: spec.cleanupPolicy,
          })),
        ),
      { ...retry, what: 'create the Icepack topics' },
    );
    await retryUntil(() => producer.connect(), { ...retry, what: 'connect the Kafka producer' });
    logger.info('provisioner ready for work');
    // Consumers, queues and API routes of this service are added here.
  },
  { service: 'provisioner' },
);
