// Composition root of the provisioner: config → telemetry → logger → clients → HTTP → start → drain.
import { readFileSync } from 'node:fs';
import { Topics, TopicSpecs } from '@icepack/types';
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
  telemetryOptions,
} from '@icepack/runtime';
import { catalogProbe } from './adapters/catalog-probe.ts';
import type { ClusterPort } from './adapters/cluster-port.ts';
import { KubeCluster } from './adapters/kube-cluster.ts';
import { loadKubeConfig } from './adapters/kube-config.ts';
import { LocalCluster } from './adapters/local-cluster.ts';
import { KafkaPublisher } from './adapters/publisher.ts';
import { RedisStore } from './adapters/redis-store.ts';
import { BullmqTaskActivity } from './adapters/task-activity.ts';
import { openApiDocument } from './api/openapi.ts';
import { configSchema } from './config.ts';
import type { Config } from './config.ts';
import { parseBootstrap } from './domain/bootstrap-file.ts';
import { amountOf } from './domain/capacity.ts';
import { createProvisioner } from './provisioner.ts';

function clusterFor(config: Config): ClusterPort {
  if (config.ICEPACK_PROVISIONER_MODE === 'local') {
    const cpu = config.ICEPACK_LOCAL_CPU;
    const memory = config.ICEPACK_LOCAL_MEMORY;
    return new LocalCluster(
      cpu !== undefined && memory !== undefined ? { allocatable: amountOf({ cpu, memory }) } : {},
    );
  }
  return new KubeCluster(loadKubeConfig(config.ICEPACK_KUBE_API_URL, config.ICEPACK_KUBE_TOKEN));
}

runService(
  async (lifecycle) => {
    const config = loadConfig(configSchema);
    const telemetry = startTelemetry(telemetryOptions(config));
    lifecycle.onShutdown('telemetry', () => telemetry.shutdown());
    const logger = createLogger({
      service: config.ICEPACK_SERVICE_NAME,
      level: config.ICEPACK_LOG_LEVEL,
    });
    lifecycle.configure({ logger, timeoutMs: config.ICEPACK_SHUTDOWN_TIMEOUT });
    logger.info({ config: redactConfig(config) }, 'starting');
    // A bad bootstrap file stops the start at once, naming the entry.
    const bootstrap =
      config.ICEPACK_BOOTSTRAP_FILE === undefined
        ? undefined
        : parseBootstrap(
            readFileSync(config.ICEPACK_BOOTSTRAP_FILE, 'utf8'),
            config.ICEPACK_BOOTSTRAP_FILE,
          );

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
    const cluster = clusterFor(config);

    const provisioner = createProvisioner({
      store: new RedisStore(redis.redis, config.ICEPACK_PROVISIONER_KEY_PREFIX),
      cluster,
      publisher: new KafkaPublisher(producer),
      activity: new BullmqTaskActivity(redis.redis),
      probe: catalogProbe({ timeoutMs: config.ICEPACK_CATALOG_PROBE_TIMEOUT }),
      logger,
      reconcileIntervalMs: config.ICEPACK_RECONCILE_INTERVAL,
      drainTimeoutMs: config.ICEPACK_DRAIN_TIMEOUT,
      meter: telemetry.meter,
      ...(bootstrap === undefined ? {} : { bootstrap }),
    });
    lifecycle.onShutdown('reconcile loop', () => provisioner.stop());

    const http = createHttpServer({
      port: config.ICEPACK_HTTP_PORT,
      host: config.ICEPACK_HTTP_HOST,
      logger,
      readiness: [
        { name: 'kafka', check: () => kafka.health() },
        { name: 'redis', check: () => redis.health() },
        ...(cluster.mode === 'kubernetes'
          ? [{ name: 'kubernetes', check: () => cluster.health() }]
          : []),
      ],
      metrics: telemetry.metricsEndpoint,
    });
    // The API description is public; everything else under /v1 needs the token.
    const openApi = openApiDocument();
    http.app.get('/v1/openapi.json', (_req, res) => {
      res.json(openApi);
    });
    http.app.use('/v1', requireBearerToken(config.ICEPACK_API_TOKEN), provisioner.router);
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
    await retryUntil(() => redis.redis.ping(), { ...retry, what: 'reach Redis' });
    await provisioner.start();
    logger.info({ dlq: Topics.dlq, mode: cluster.mode }, 'provisioner ready for work');
  },
  { service: 'provisioner' },
);
