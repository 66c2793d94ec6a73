// Composition root of the planner: config → telemetry → logger → clients → HTTP → start → drain.
import { hostname } from 'node:os';
import {
  ensureTopics,
  EnvelopeConsumer,
  openServiceCore,
  requireBearerToken,
  retryUntil,
  runService,
} from '@icepack/runtime';
import { TopicSpecs } from '@icepack/types';
import { AgingPass } from './adapters/aging-pass.ts';
import { PLANNER_REDIS_OPTIONS } from './adapters/redis-options.ts';
import { CatalogPolicies } from './adapters/catalog-policies.ts';
import { ConsoleStore } from './adapters/console-store.ts';
import { LastSucceededStore } from './adapters/last-succeeded.ts';
import { LedgerStore } from './adapters/ledger-store.ts';
import { Planner } from './adapters/planner.ts';
import { PlannerMetrics } from './adapters/planner-metrics.ts';
import { QueueDepth } from './adapters/queue-depth.ts';
import { QuotaUseReader } from './adapters/quota-use-reader.ts';
import { ScriptedTableReads } from './adapters/table-reads.ts';
import { SizingModelReader } from './adapters/sizing-model-reader.ts';
import { ReplanPass } from './adapters/replan-pass.ts';
import { TableStateStore } from './adapters/state-store.ts';
import { KafkaTaskEventSink } from './adapters/task-event-sink.ts';
import { TaskQueue } from './adapters/task-queue.ts';
import { tableStateHandlers } from './adapters/table-state-handlers.ts';
import { taskOutcomeHandlers } from './adapters/task-outcome-handlers.ts';
import { mountConsole } from './console/mount-console.ts';
import { withRecentFailures } from './console/recent-failures.ts';
import { TableSummaries } from './console/table-summaries.ts';
import { plannerRouter } from './api/planner-router.ts';
import { configSchema, type Config } from './config.ts';
import { DEFAULT_SCORE_OPTIONS, type ScoreOptions } from './domain/score.ts';

function scoreOptions(config: Config): ScoreOptions {
  return {
    ...DEFAULT_SCORE_OPTIONS,
    agingStepMs: config.ICEPACK_PLANNER_AGING_STEP,
    agingStepPoints: config.ICEPACK_PLANNER_AGING_STEP_POINTS,
    overdueAfterMs: config.ICEPACK_PLANNER_OVERDUE_AFTER,
    snapshotStep: config.ICEPACK_PLANNER_SNAPSHOT_STEP,
    snapshotStepPoints: config.ICEPACK_PLANNER_SNAPSHOT_STEP_POINTS,
    smallFileStep: config.ICEPACK_PLANNER_SMALL_FILE_STEP,
    smallFileStepPoints: config.ICEPACK_PLANNER_SMALL_FILE_STEP_POINTS,
    deleteFileStep: config.ICEPACK_PLANNER_DELETE_FILE_STEP,
    deleteFileStepPoints: config.ICEPACK_PLANNER_DELETE_FILE_STEP_POINTS,
  };
}

runService(
  async (lifecycle) => {
    const core = openServiceCore(lifecycle, configSchema, {
      redisRole: 'producer',
      redisOptions: PLANNER_REDIS_OPTIONS,
    });
    const { config, telemetry, logger, kafka, redis, producer, retry } = core;

    // BullMQ's queue objects on a connection of their own: BullMQ defines its scripts on the
    // connection it is given, and ioredis copies them into every pipeline of that connection
    // (each auto-pipelined batch of the planner's own commands too; issue 17 point 6).
    const queueRedis = core.openRedis('producer', 'icepack-planner-queues', PLANNER_REDIS_OPTIONS);
    lifecycle.onShutdown('redis (queues)', () => queueRedis.close());
    // (Same server and user as the main connection: the `redis` readiness check stands for both.)
    const http = core.httpServer();
    // Everything under /v1 needs the token; health and metrics stay open for probes.
    http.app.use('/v1', requireBearerToken(config.ICEPACK_API_TOKEN));

    const queue = new TaskQueue({ connection: redis.redis, queueConnection: queueRedis.redis });
    lifecycle.onShutdown('task queues', () => queue.close());
    const states = new TableStateStore({ connection: redis.redis });
    const scores = scoreOptions(config);
    const catalogPolicies = new CatalogPolicies(config.ICEPACK_PLANNER_CATALOG_POLICY);
    const lastSucceeded = new LastSucceededStore({ connection: redis.redis });
    const ledger = new LedgerStore({
      connection: redis.redis,
      bounds: {
        retentionMs: config.ICEPACK_PLANNER_LEDGER_RETENTION,
        maxEntries: config.ICEPACK_PLANNER_LEDGER_MAX_ENTRIES,
      },
    });
    const events = new KafkaTaskEventSink(producer, config.ICEPACK_PLANNER_TASK_EVENTS_TOPIC);
    // The console's pauses are the top layer of the policy (ADR 0024), read with each state.
    const consoleStore = new ConsoleStore({ connection: redis.redis });
    const planner = new Planner({
      queue,
      states,
      lastSucceeded,
      events,
      logger,
      scoreOptions: scores,
      catalogPolicy: (catalog: string) => catalogPolicies.policyOf(catalog),
      pauses: consoleStore,
      reads: new ScriptedTableReads({ connection: redis.redis, states, queue, lastSucceeded }),
    });
    http.app.use(
      '/v1',
      plannerRouter({
        planner,
        queue,
        token: config.ICEPACK_API_TOKEN,
        catalogs: () => states.catalogs(),
        ledger,
        sizing: new SizingModelReader({ connection: redis.redis, logger }),
      }),
    );
    await mountConsole(http, {
      planner,
      states,
      queue,
      store: consoleStore,
      summaries: new TableSummaries({ states, lastSucceeded }),
      ledger,
      quotaUse: new QuotaUseReader({ connection: redis.redis, logger }),
      events,
      token: config.ICEPACK_API_TOKEN,
      trustedUserHeader: config.ICEPACK_CONSOLE_TRUSTED_USER_HEADER,
      logger,
    });
    await core.listen(http);

    await retryUntil(() => producer.connect(), { ...retry, what: 'connect the Kafka producer' });
    await retryUntil(
      () =>
        ensureTopics(kafka, [
          { ...TopicSpecs.tableState, name: config.ICEPACK_PLANNER_TABLE_STATE_TOPIC },
          { ...TopicSpecs.catalogs, name: config.ICEPACK_PLANNER_CATALOGS_TOPIC },
          { ...TopicSpecs.taskEvents, name: config.ICEPACK_PLANNER_TASK_EVENTS_TOPIC },
          { ...TopicSpecs.dlq, name: config.ICEPACK_PLANNER_DLQ_TOPIC },
        ]),
      { ...retry, what: 'create the Kafka topics' },
    );

    // Each catalog's policy, from its definition: every replica needs every catalog, so a
    // group of its own read from the start (the topic is compacted). Started beside the
    // table-state consumer: a state planned before its catalog's definition is read uses the
    // default, and the plan reports the mismatch (docs/planner.md).
    const catalogsConsumer = new EnvelopeConsumer(kafka, {
      groupId: `icepack-planner-catalogs-${hostname()}-${String(process.pid)}`,
      topics: [config.ICEPACK_PLANNER_CATALOGS_TOPIC],
      handlers: {
        CatalogDefined: (message) => catalogPolicies.set(message.payload.name, message.payload),
      },
      onTombstone: (key) => {
        if (key !== null) catalogPolicies.set(key, undefined);
      },
      producer,
      fromBeginning: true,
      tracer: telemetry.tracer,
    });
    lifecycle.onShutdown('catalogs consumer', () => catalogsConsumer.stop());

    const consumer = new EnvelopeConsumer(kafka, {
      groupId: config.ICEPACK_PLANNER_GROUP_ID,
      topics: [config.ICEPACK_PLANNER_TABLE_STATE_TOPIC],
      producer,
      dlqTopic: config.ICEPACK_PLANNER_DLQ_TOPIC,
      tracer: telemetry.tracer,
      partitionsConsumedConcurrently: config.ICEPACK_PLANNER_CONCURRENCY,
      messagesInFlight: config.ICEPACK_PLANNER_STATES_IN_FLIGHT,
      maxBytesPerPartition: config.ICEPACK_PLANNER_FETCH_BYTES_PER_PARTITION,
      ...tableStateHandlers(planner, new PlannerMetrics(telemetry.meter)),
    });
    lifecycle.onShutdown('table-state consumer', () => consumer.stop());
    await Promise.all([
      retryUntil(() => catalogsConsumer.start(), { ...retry, what: 'start the catalogs consumer' }),
      consumer.start(),
    ]);

    // When each task type last succeeded: from the task outcomes (decision 0005).
    const outcomes = new EnvelopeConsumer(kafka, {
      groupId:
        config.ICEPACK_PLANNER_OUTCOMES_GROUP_ID ?? `${config.ICEPACK_PLANNER_GROUP_ID}-outcomes`,
      topics: [config.ICEPACK_PLANNER_TASK_EVENTS_TOPIC],
      producer,
      dlqTopic: config.ICEPACK_PLANNER_DLQ_TOPIC,
      tracer: telemetry.tracer,
      handlers: withRecentFailures(taskOutcomeHandlers(lastSucceeded, ledger), consoleStore),
    });
    lifecycle.onShutdown('task-outcome consumer', () => outcomes.stop());
    await outcomes.start();

    if (config.ICEPACK_PLANNER_REPLAN_INTERVAL > 0) {
      const replan = new ReplanPass({
        planner,
        states,
        connection: redis.redis,
        logger,
        intervalMs: config.ICEPACK_PLANNER_REPLAN_INTERVAL,
        batchSize: config.ICEPACK_PLANNER_REPLAN_BATCH,
      });
      replan.start();
      lifecycle.onShutdown('re-plan pass', () => replan.stop());
    }

    const aging = new AgingPass({
      queue,
      states,
      connection: redis.redis,
      scoreOptions: scores,
      logger,
      intervalMs: config.ICEPACK_PLANNER_AGING_INTERVAL,
    });
    aging.start();
    lifecycle.onShutdown('aging pass', () => aging.stop());
    // Measuring the queues costs Redis calls: only when someone reads the gauge.
    if (telemetry.metricsEnabled) {
      const depth = new QueueDepth({
        queue,
        catalogs: () => states.catalogs(),
        meter: telemetry.meter,
        logger,
        intervalMs: config.ICEPACK_PLANNER_QUEUE_METRICS_INTERVAL,
      });
      depth.start();
      lifecycle.onShutdown('queue depth', () => depth.stop());
    }
    logger.info('planner ready for work');
  },
  { service: 'planner' },
);
