// Composition root of the metadata-scanner: config → telemetry → logger → clients → HTTP → start → drain.
import { ManifestCache } from '@icepack/iceberg';
import {
  catalogAccessPolicy,
  ensureTopics,
  EnvelopeConsumer,
  openServiceCore,
  retryUntil,
  runService,
  secretResolver,
} from '@icepack/runtime';
import { TopicSpecs } from '@icepack/types';
import { loadBootstrap } from './adapters/bootstrap-source.ts';
import { CatalogClients } from './adapters/catalog-clients.ts';
import { CatalogProber } from './adapters/catalog-prober.ts';
import { CommitDebouncer } from './adapters/commit-debouncer.ts';
import { ConsumerLag } from './adapters/consumer-lag.ts';
import { ControlPlane } from './adapters/control-plane.ts';
import { Discovery } from './adapters/discovery.ts';
import { KnownTablesStore } from './adapters/known-tables-store.ts';
import { ScanRequestBatchPublisher } from './adapters/scan-request-batch.ts';
import { ScannerMetrics } from './adapters/scanner-metrics.ts';
import { TableScanner } from './adapters/table-scanner.ts';
import { TableStateStore } from './adapters/table-state-store.ts';
import { configSchema } from './config.ts';
import { CatalogHealth } from './domain/catalog-health.ts';
import { CatalogRegistry } from './domain/catalog-registry.ts';
import { KeyedSemaphore } from './domain/keyed-semaphore.ts';

runService(
  async (lifecycle) => {
    const core = openServiceCore(lifecycle, configSchema, { redisRole: 'producer' });
    const { config, telemetry, logger, kafka, redis, producer, retry } = core;

    // A bad bootstrap document is a configuration error: fail now, naming the field.
    const registry = new CatalogRegistry();
    if (config.ICEPACK_SCANNER_BOOTSTRAP !== undefined) {
      const bootstrap = await loadBootstrap(config.ICEPACK_SCANNER_BOOTSTRAP);
      for (const catalog of bootstrap.catalogs) registry.define(catalog);
      for (const name of bootstrap.bindings) registry.bind(name);
      logger.info(
        { catalogs: bootstrap.catalogs.map((c) => c.name), bindings: bootstrap.bindings },
        'bootstrap catalogs and bindings loaded',
      );
    }

    const debounceWorkerRedis = core.openRedis('worker', 'icepack-scanner-debounce');
    lifecycle.onShutdown('redis (debounce worker)', () => debounceWorkerRedis.close());
    const discoveryWorkerRedis = core.openRedis('worker', 'icepack-scanner-discovery');
    lifecycle.onShutdown('redis (discovery worker)', () => discoveryWorkerRedis.close());

    const batch = new ScanRequestBatchPublisher(kafka);
    lifecycle.onShutdown('kafka batch producer', () => batch.disconnect());

    const metrics = new ScannerMetrics(telemetry.meter);
    const health = new CatalogHealth({
      initialMs: 1_000,
      maxMs: config.ICEPACK_SCANNER_CATALOG_MAX_BACKOFF,
    });
    const access = catalogAccessPolicy(config);
    const clients = new CatalogClients(
      secretResolver(process.env, access),
      config.ICEPACK_SCANNER_CATALOG_TIMEOUT,
      access,
      config.ICEPACK_SCANNER_CATALOG_MAX_RESPONSE_MB * 2 ** 20,
      config.ICEPACK_LOCAL_CATALOGS,
      config.ICEPACK_SCANNER_CATALOG_GZIP,
    );
    const prober = new CatalogProber(health, registry, clients, logger);
    lifecycle.onShutdown('catalog prober', () => prober.stop());
    const onCatalogFailure = (name: string) => prober.schedule(name);
    const prefix = config.ICEPACK_SCANNER_REDIS_PREFIX;
    const states = new TableStateStore({ redis: redis.redis, prefix });
    const known = new KnownTablesStore(redis.redis, prefix);
    const topics = {
      commits: config.ICEPACK_SCANNER_COMMITS_TOPIC,
      scanRequests: config.ICEPACK_SCANNER_SCAN_REQUESTS_TOPIC,
      tableState: config.ICEPACK_SCANNER_TABLE_STATE_TOPIC,
      catalogs: config.ICEPACK_SCANNER_CATALOGS_TOPIC,
      bindings: config.ICEPACK_SCANNER_BINDINGS_TOPIC,
      dlq: config.ICEPACK_SCANNER_DLQ_TOPIC,
    };

    const http = core.httpServer([{ name: 'catalogs', check: () => health.report() }]);
    await core.listen(http);

    await retryUntil(() => producer.connect(), { ...retry, what: 'connect the Kafka producer' });
    await retryUntil(() => batch.connect(), { ...retry, what: 'connect the Kafka producer' });
    await retryUntil(
      () =>
        ensureTopics(kafka, [
          { ...TopicSpecs.commits, name: topics.commits },
          {
            ...TopicSpecs.scanRequests,
            name: topics.scanRequests,
            partitions: config.ICEPACK_SCANNER_SCAN_PARTITIONS,
          },
          { ...TopicSpecs.tableState, name: topics.tableState },
          { ...TopicSpecs.catalogs, name: topics.catalogs },
          { ...TopicSpecs.bindings, name: topics.bindings },
          { ...TopicSpecs.dlq, name: topics.dlq },
        ]),
      { ...retry, what: 'create the Kafka topics' },
    );

    // Catalogs and bindings first: scanning waits until what the topics held is applied.
    const controlPlane = new ControlPlane({
      kafka,
      producer,
      registry,
      catalogsTopic: topics.catalogs,
      bindingsTopic: topics.bindings,
      dlqTopic: topics.dlq,
      groupPrefix: config.ICEPACK_SCANNER_GROUP_ID,
      logger,
    });
    lifecycle.onShutdown('control-plane consumer', () => controlPlane.stop());
    await controlPlane.start();
    await retryUntil(() => controlPlane.caughtUp(lifecycle.signal), {
      ...retry,
      what: 'read the catalogs and bindings topics',
    });
    logger.info(
      {
        active: registry.activeCatalogs().map((c) => c.name),
        boundButUndefined: registry.boundButUndefined(),
      },
      'catalogs and bindings read',
    );

    const catchUp = () => controlPlane.current();
    const scanner = new TableScanner({
      registry,
      catchUp,
      clients,
      health,
      semaphore: new KeyedSemaphore(config.ICEPACK_SCANNER_CATALOG_CONCURRENCY),
      states,
      known,
      cache: new ManifestCache({
        maxBytes: config.ICEPACK_SCANNER_MANIFEST_CACHE_MB * 1024 * 1024,
      }),
      producer,
      tableStateTopic: topics.tableState,
      tableStateVersion: config.ICEPACK_SCANNER_TABLE_STATE_VERSION,
      metrics,
      tracer: telemetry.tracer,
      onCatalogFailure,
    });
    const debouncer = new CommitDebouncer({
      queueName: config.ICEPACK_SCANNER_DEBOUNCE_QUEUE,
      windowMs: config.ICEPACK_SCANNER_DEBOUNCE,
      producerConnection: redis.redis,
      workerConnection: debounceWorkerRedis.redis,
      producer,
      scanRequestsTopic: topics.scanRequests,
      registry,
      catchUp,
      metrics,
      logger,
    });
    lifecycle.onShutdown('commit debouncer', () => debouncer.close());
    const discovery = new Discovery({
      queueName: config.ICEPACK_SCANNER_DISCOVERY_QUEUE,
      intervalMs: config.ICEPACK_SCANNER_DISCOVERY_INTERVAL,
      producerConnection: redis.redis,
      workerConnection: discoveryWorkerRedis.redis,
      producer,
      batch,
      scanRequestsTopic: topics.scanRequests,
      tableStateTopic: topics.tableState,
      registry,
      catchUp,
      clients,
      health,
      known,
      states,
      metrics,
      logger,
      onCatalogFailure,
    });
    lifecycle.onShutdown('discovery', () => discovery.close());

    // New and removed bindings take effect live: schedulers follow the registry.
    let reconciling = Promise.resolve();
    const reconcile = () => {
      clients.retain(new Set(registry.activeCatalogs().map((c) => c.name)));
      reconciling = reconciling
        .then(() =>
          retryUntil(() => discovery.reconcile(), { ...retry, what: 'schedule discovery' }),
        )
        .catch((error: unknown) => logger.debug({ err: error }, 'discovery scheduling stopped'));
    };
    registry.onChange(reconcile);
    reconcile();

    const scanGroup = config.ICEPACK_SCANNER_GROUP_ID;
    const commitGroup = `${config.ICEPACK_SCANNER_GROUP_ID}-commits`;
    const scanConsumer = new EnvelopeConsumer(kafka, {
      groupId: scanGroup,
      topics: [topics.scanRequests],
      producer,
      dlqTopic: topics.dlq,
      tracer: telemetry.tracer,
      partitionsConsumedConcurrently: config.ICEPACK_SCANNER_PARTITIONS_CONCURRENCY,
      handlers: {
        ScanTable: async (message, ctx) => {
          await scanner.scan(message.payload, ctx.logger);
        },
      },
    });
    lifecycle.onShutdown('scan-request consumer', () => scanConsumer.stop());
    const commitConsumer = new EnvelopeConsumer(kafka, {
      groupId: commitGroup,
      topics: [topics.commits],
      producer,
      dlqTopic: topics.dlq,
      tracer: telemetry.tracer,
      partitionsConsumedConcurrently: 3,
      handlers: { CommitObserved: (message) => debouncer.onCommit(message) },
    });
    lifecycle.onShutdown('commit consumer', () => commitConsumer.stop());
    const lag = new ConsumerLag({
      kafka,
      meter: telemetry.meter,
      groups: [
        { groupId: scanGroup, topic: topics.scanRequests },
        { groupId: commitGroup, topic: topics.commits },
      ],
      intervalMs: config.ICEPACK_SCANNER_LAG_INTERVAL,
      logger,
    });
    lifecycle.onShutdown('consumer lag', () => lag.stop());

    debouncer.start();
    discovery.start();
    await Promise.all([scanConsumer.start(), commitConsumer.start()]);
    lag.start();
    logger.info('metadata-scanner ready for work');
  },
  { service: 'metadata-scanner' },
);
