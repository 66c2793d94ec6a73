// Composition root of the dispatcher: config → telemetry → logger → clients → HTTP → start → drain.
import { hostname } from 'node:os';
import {
  catalogAccessPolicy,
  EnvelopeConsumer,
  openServiceCore,
  retryUntil,
  runService,
  sparkSettingsPolicy,
} from '@icepack/runtime';
import { BindingRegistry } from './adapters/binding-registry.ts';
import { createCatalogWorker } from './adapters/create-catalog-worker.ts';
import { DispatchMetrics } from './adapters/dispatch-metrics.ts';
import { KafkaDispatchSink } from './adapters/task-events.ts';
import { configSchema } from './config.ts';
import { LaunchGate } from './domain/launch-gate.ts';

runService(
  async (lifecycle) => {
    const core = openServiceCore(lifecycle, configSchema, { redisRole: 'worker' });
    const { config, telemetry, logger, kafka, redis, producer, retry } = core;

    const http = core.httpServer();
    await core.listen(http);

    await retryUntil(() => producer.connect(), { ...retry, what: 'connect the Kafka producer' });

    // One worker per bound catalog, from the compacted catalogs and bindings topics.
    // One gate for the process: its catalogs take turns at the API server (ADR 0040).
    const launchGate = new LaunchGate(config.ICEPACK_DISPATCHER_MAX_LAUNCHES);
    const metrics = new DispatchMetrics(telemetry.meter, launchGate);
    const registry = new BindingRegistry({
      logger,
      sparkPolicy: sparkSettingsPolicy(config),
      accessPolicy: catalogAccessPolicy(config),
      ...(config.ICEPACK_DISPATCHER_CATALOGS === undefined
        ? {}
        : { catalogs: config.ICEPACK_DISPATCHER_CATALOGS }),
      create: (binding, catalog) =>
        createCatalogWorker(binding, catalog, {
          metrics,
          launchGate,
          redis: redis.redis,
          sink: new KafkaDispatchSink(producer),
          logger,
          stateDir: config.ICEPACK_DISPATCHER_STATE_DIR,
          ...(config.ICEPACK_SPARK_JARS === undefined
            ? {}
            : { sparkJars: config.ICEPACK_SPARK_JARS }),
          ...(config.ICEPACK_LOCAL_JOB_ENV === undefined
            ? {}
            : { localJobEnv: config.ICEPACK_LOCAL_JOB_ENV }),
          sparkImage: config.ICEPACK_SPARK_IMAGE,
          sparkAppTtlMs: config.ICEPACK_SPARK_APP_TTL,
          ...(config.ICEPACK_SPARK_SECRET === undefined
            ? {}
            : { sparkSecret: config.ICEPACK_SPARK_SECRET }),
          maxAttempts: config.ICEPACK_TASK_MAX_ATTEMPTS,
          backoffMs: config.ICEPACK_TASK_BACKOFF,
          timeoutMs: config.ICEPACK_TASK_TIMEOUT,
          quotaWaitMs: config.ICEPACK_QUOTA_WAIT,
          ...(config.ICEPACK_DISPATCHER_BATCH
            ? { batch: { maxTasks: config.ICEPACK_DISPATCHER_BATCH_MAX_TASKS } }
            : {}),
          // ADR 0045; the spark-operator runner ignores it (one application per batch).
          ...(config.ICEPACK_DISPATCHER_SESSION_IDLE_SECONDS > 0
            ? {
                resident: {
                  idleSeconds: config.ICEPACK_DISPATCHER_SESSION_IDLE_SECONDS,
                  maxTasks: config.ICEPACK_DISPATCHER_SESSION_MAX_TASKS,
                },
              }
            : {}),
          sizing: {
            learned: config.ICEPACK_SIZING_LEARNED,
            refreshMs: config.ICEPACK_SIZING_REFRESH,
          },
          figures: {
            localCatalogs: config.ICEPACK_LOCAL_CATALOGS,
            policy: catalogAccessPolicy(config),
          },
        }),
    });
    // Shutdown runs in reverse: the workers stop (running Spark jobs keep running and are
    // re-attached after the restart), then the consumer.
    const catalogsTopic = config.ICEPACK_DISPATCHER_CATALOGS_TOPIC;
    const consumer = new EnvelopeConsumer(kafka, {
      // Every replica needs every binding: a group of its own, read from the start.
      groupId: `icepack-dispatcher-${hostname()}-${String(process.pid)}`,
      topics: [catalogsTopic, config.ICEPACK_DISPATCHER_BINDINGS_TOPIC],
      handlers: {
        CatalogDefined: (message) => registry.setCatalog(message.payload.name, message.payload),
        BindingUpdated: (message) => registry.setBinding(message.payload.catalog, message.payload),
      },
      onTombstone: (key, context) => {
        if (key === null) return;
        return context.topic === catalogsTopic
          ? registry.setCatalog(key, undefined)
          : registry.setBinding(key, undefined);
      },
      producer,
      fromBeginning: true,
      tracer: telemetry.tracer,
    });
    lifecycle.onShutdown('bindings consumer', () => consumer.stop());
    lifecycle.onShutdown('catalog workers', () => registry.closeAll());
    await retryUntil(() => consumer.start(), { ...retry, what: 'start the bindings consumer' });
    logger.info('dispatcher ready for work');
  },
  { service: 'dispatcher' },
);
