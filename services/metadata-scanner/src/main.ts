// Composition root of the metadata-scanner: config → telemetry → logger → clients → HTTP → start → drain.
import {
  createHttpServer,
  createLogger,
  createRedisConnection,
  EnvelopeProducer,
  KafkaClient,
  loadConfig,
  redactConfig,
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
    const redis = createRedisConnection(config.ICEPACK_REDIS_URL, { role: 'producer', logger });
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
    await http.listen();
    lifecycle.onShutdown('http server', () => http.close());

    const retry = { logger, signal: lifecycle.signal };
    await retryUntil(() => producer.connect(), { ...retry, what: 'connect the Kafka producer' });
    logger.info('metadata-scanner ready for work');
    // Consumers, queues and API routes of this service are added here.
  },
  { service: 'metadata-scanner' },
);
