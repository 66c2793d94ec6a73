// Composition root of the provisioner: config → telemetry → logger → clients → HTTP → start → drain.
import { readFileSync } from 'node:fs';
import { Topics, TopicSpecs } from '@icepack/types';
import {
  catalogAccessPolicy,
  sparkSettingsPolicy,
  ensureTopics,
  openServiceCore,
  requireBearerToken,
  retryUntil,
  runService,
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
  return new KubeCluster(
    loadKubeConfig(config.ICEPACK_KUBE_API_URL, config.ICEPACK_KUBE_TOKEN),
    // Required in kubernetes mode: the schema refuses a start without it.
    config.ICEPACK_INSTALLATION_ID ?? '',
  );
}

runService(
  async (lifecycle) => {
    const core = openServiceCore(lifecycle, configSchema, { redisRole: 'client' });
    const { config, telemetry, logger, kafka, redis, producer, retry } = core;
    // A bad bootstrap file stops the start at once, naming the entry.
    const bootstrap =
      config.ICEPACK_BOOTSTRAP_FILE === undefined
        ? undefined
        : parseBootstrap(
            readFileSync(config.ICEPACK_BOOTSTRAP_FILE, 'utf8'),
            config.ICEPACK_BOOTSTRAP_FILE,
          );

    const cluster = clusterFor(config);
    const access = catalogAccessPolicy(config);

    const provisioner = createProvisioner({
      store: new RedisStore(redis.redis, config.ICEPACK_PROVISIONER_KEY_PREFIX),
      cluster,
      publisher: new KafkaPublisher(producer),
      activity: new BullmqTaskActivity(redis.redis),
      probe: catalogProbe({ timeoutMs: config.ICEPACK_CATALOG_PROBE_TIMEOUT, policy: access }),
      access,
      sparkPolicy: sparkSettingsPolicy(config),
      logger,
      reconcileIntervalMs: config.ICEPACK_RECONCILE_INTERVAL,
      drainTimeoutMs: config.ICEPACK_DRAIN_TIMEOUT,
      meter: telemetry.meter,
      ...(bootstrap === undefined ? {} : { bootstrap }),
    });
    lifecycle.onShutdown('reconcile loop', () => provisioner.stop());

    const http = core.httpServer([
      ...(cluster.mode === 'kubernetes'
        ? [{ name: 'kubernetes', check: () => cluster.health() }]
        : []),
    ]);
    // The API description is public; everything else under /v1 needs the token.
    const openApi = openApiDocument();
    http.app.get('/v1/openapi.json', (_req, res) => {
      res.json(openApi);
    });
    http.app.use('/v1', requireBearerToken(config.ICEPACK_API_TOKEN), provisioner.router);
    await core.listen(http);

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
