import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import {
  createLogger,
  deleteTopics,
  EnvelopeConsumer,
  EnvelopeProducer,
  ensureTopics,
  inSpan,
  KafkaClient,
  startTelemetry,
} from '@icepack/runtime';
import type { Telemetry } from '@icepack/runtime';
import { InMemorySpanExporter } from '@icepack/runtime/testing';
import { SpanKind } from '@opentelemetry/api';
import {
  createEnvelope,
  expandPartitionSets,
  parseMessage,
  queueNameForCatalog,
  sampleTableId,
  serializeEnvelope,
  tableKey,
  type TableId,
  type TaskEvent,
} from '@icepack/types';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AgingPass } from './adapters/aging-pass.ts';
import { Planner } from './adapters/planner.ts';
import { TableStateStore } from './adapters/state-store.ts';
import { KafkaTaskEventSink } from './adapters/task-event-sink.ts';
import { TaskQueue } from './adapters/task-queue.ts';
import { tableStateHandlers } from './adapters/table-state-handlers.ts';
import { DEFAULT_SCORE_OPTIONS } from './domain/score.ts';
import {
  dayPartition,
  partitionedTableState,
  PARTITIONS_NOW,
  tableState,
} from './domain/state-fixtures.ts';
import { waitFor } from './testing/wait-for.ts';

const infra = inject('infra');
const logger = createLogger({
  service: 'planner-kafka-test',
  level: 'warn',
  destination: new Writable({ write: (_c, _e, cb) => cb() }),
});
const suffix = randomUUID().slice(0, 8);
const catalog = `k-${suffix}`;
const stateTopic = `test.planner.${suffix}.table-state`;
const eventsTopic = `test.planner.${suffix}.task-events`;
const dlqTopic = `test.planner.${suffix}.dlq`;
const groupId = `test-planner-${suffix}`;

let redis: Redis;
let kafka: KafkaClient;
let producer: EnvelopeProducer;
let consumer: EnvelopeConsumer;
let queue: TaskQueue;
let states: TableStateStore;
let telemetry: Telemetry;
const spans = new InMemorySpanExporter();

beforeAll(async () => {
  // Started first, as the service's main does, so the Kafka consumer's spans are recorded.
  telemetry = startTelemetry({ serviceName: 'planner-kafka-test', traceExporter: spans });
  redis = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
  kafka = new KafkaClient({ brokers: infra.kafkaBrokers, clientId: groupId, logger });
  await ensureTopics(kafka, [
    { name: stateTopic, cleanupPolicy: 'compact', partitions: 2 },
    { name: eventsTopic, cleanupPolicy: 'delete', partitions: 1 },
    { name: dlqTopic, cleanupPolicy: 'delete', partitions: 1 },
  ]);
  producer = new EnvelopeProducer(kafka);
  await producer.connect();
  queue = new TaskQueue({ connection: redis });
  states = new TableStateStore({
    connection: redis,
    statesKey: `test:${catalog}:states`,
    catalogsKey: `test:${catalog}:catalogs`,
  });
  const planner = new Planner({
    queue,
    states,
    events: new KafkaTaskEventSink(producer, eventsTopic),
    logger,
  });
  consumer = new EnvelopeConsumer(kafka, {
    groupId,
    topics: [stateTopic],
    producer,
    dlqTopic,
    ...tableStateHandlers(planner),
  });
  await consumer.start();
});

afterAll(async () => {
  await consumer.stop();
  await producer.disconnect();
  await deleteTopics(kafka, [stateTopic, eventsTopic, dlqTopic]);
  const admin = kafka.kafka.admin();
  await admin.connect();
  await admin
    .deleteGroups([groupId, `${groupId}-events`, `${groupId}-batched`])
    .catch(() => undefined);
  await admin.disconnect();
  await kafka.close();
  await queue.queue(catalog).obliterate({ force: true });
  await queue.close();
  await states.clear();
  await redis.quit();
  await telemetry.shutdown();
});

describe('Kafka → planner → queue', () => {
  it('a TableScanned message becomes one task; its redelivery and a tombstone behave', async () => {
    const table = sampleTableId({ catalog, name: 'orders' });
    const key = tableKey(table);
    const state = tableState({ smallFiles: 80, newDataFiles: 5 }, { table });
    // The scanner's trace context rides in the headers; the task continues it.
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const traceparent = `00-${traceId}-b7ad6b7169203331-01`;
    const envelope = serializeEnvelope(createEnvelope('TableScanned', key, state));
    // (Sent from inside the scanner's span, as the scanner does.)
    await inSpan('scan table', { parent: { traceparent } }, () =>
      producer.sendRaw(stateTopic, key, envelope),
    );
    await producer.sendRaw(stateTopic, key, envelope); // redelivered / re-published

    const waiting = await waitFor('the merge task', async () => {
      const list = await queue.waiting(catalog);
      return list.length > 0 ? list : undefined;
    });
    expect(waiting.map((w) => w.task.id)).toEqual([`merge/${key}`]);

    // The enqueue has its own span: a producer span under the state's consume span (itself
    // under the scanner's send span), and the task's trace context is that span's, so the
    // dispatcher's span will be its child.
    // The consume span ends once the task event is sent and the state stored.
    const finished = await waitFor('the consume span to end', async () => {
      await telemetry.flush();
      const all = spans.getFinishedSpans();
      return all.some((s) => s.name === `process ${stateTopic}`) ? all : undefined;
    });
    const enqueues = finished.filter((s) => s.name === 'enqueue merge');
    expect(enqueues).toHaveLength(1);
    const enqueue = enqueues[0]!;
    const parent = finished.find(
      (s) => s.spanContext().spanId === enqueue.parentSpanContext?.spanId,
    );
    expect(parent?.name).toBe(`process ${stateTopic}`);
    expect(parent?.kind).toBe(SpanKind.CONSUMER);
    expect(enqueue.spanContext().traceId).toBe(traceId);
    expect(enqueue.kind).toBe(SpanKind.PRODUCER);
    expect(enqueue.attributes).toMatchObject({
      'icepack.queue': queueNameForCatalog(catalog),
      'icepack.task.id': `merge/${key}`,
      'icepack.task.priority': waiting[0]?.priority,
      'icepack.enqueue.outcome': 'added',
    });
    expect(waiting[0]?.task.traceparent).toBe(`00-${traceId}-${enqueue.spanContext().spanId}-01`);

    // The planned event reached icepack.task-events (here: its test topic), keyed by table.
    const events: TaskEvent[] = [];
    const reader = kafka.kafka.consumer({ groupId: `${groupId}-events` });
    await reader.connect();
    await reader.subscribe({ topic: eventsTopic, fromBeginning: true });
    await reader.run({
      eachMessage: ({ message }) => {
        events.push(
          parseMessage(message.value ?? '', ['TaskPlanned', 'TaskSkipped']).payload as TaskEvent,
        );
        return Promise.resolve();
      },
    });
    await waitFor('the planned event', () =>
      Promise.resolve(events.length >= 1 ? true : undefined),
    );

    // The table is dropped: its waiting task goes.
    await producer.tombstone(stateTopic, key);
    await waitFor('the task to go', async () =>
      (await queue.waiting(catalog)).length === 0 ? true : undefined,
    );
    await waitFor('the skipped event', () =>
      Promise.resolve(events.length >= 2 ? true : undefined),
    );
    await reader.disconnect();
    expect(events.map((e) => [e.status, e.taskId, e.reason])).toEqual([
      ['planned', `merge/${key}`, '80 small files > 20'],
      ['skipped', `merge/${key}`, 'the table was dropped'],
    ]);
  });
});

/**
 * Publishes a partitioned fixture state of `table` at most 2 GiB per task. The fixtures' clock
 * is a fixed day; the rules only compare against "now" for intervals.
 */
function sendPartitionedState(
  table: TableId,
  state: ReturnType<typeof partitionedTableState>,
): Promise<void> {
  const key = tableKey(table);
  return producer.sendRaw(
    stateTopic,
    key,
    serializeEnvelope(
      createEnvelope('TableScanned', key, {
        ...state,
        table,
        properties: { 'icepack.max-bytes-per-task': '2GiB' },
        scannedAt: PARTITIONS_NOW.toISOString(),
      }),
    ),
  );
}

describe('Kafka → planner → queue: partition-scoped plans', () => {
  it('splits a plan into one task per partition group and follows the next state', async () => {
    const table = sampleTableId({ catalog, name: 'events' });
    const key = tableKey(table);
    const days = [
      dayPartition('2026-01-09', 1),
      dayPartition('2026-01-08', 2),
      dayPartition('2026-01-07', 3),
      dayPartition('2026-01-01', 9, { smallFiles: 2 }), // below its thresholds
    ];
    const base = partitionedTableState(days);
    const send = (state: typeof base) => sendPartitionedState(table, state);
    await send(base);
    const first = await waitFor('two merge tasks', async () => {
      const list = await queue.waiting(catalog);
      return list.filter((w) => w.task.table.name === 'events').length === 2 ? list : undefined;
    });
    const byId = new Map(first.map((w) => [w.task.id, w.task]));
    const partitionsOf = (id: string) => {
      const task = byId.get(id);
      return task?.type === 'merge'
        ? expandPartitionSets(task.parameters.partitionSets ?? [])
        : undefined;
    };
    // Newest first, 1 GiB of small files each, at most 2 GiB per task.
    expect(partitionsOf(`merge/${key}`)).toEqual([
      [
        { column: 'region', value: 'eu' },
        { column: 'ts', transform: 'day', value: '2026-01-09' },
      ],
      [
        { column: 'region', value: 'eu' },
        { column: 'ts', transform: 'day', value: '2026-01-08' },
      ],
    ]);
    expect(partitionsOf(`merge/${key}#2`)).toEqual([
      [
        { column: 'region', value: 'eu' },
        { column: 'ts', transform: 'day', value: '2026-01-07' },
      ],
    ]);

    // A newer state: only one partition still needs work. Group 1 is updated to it, group 2
    // goes (skipped).
    await send({
      ...base,
      lastSequenceNumber: String(Number(base.lastSequenceNumber) + 1),
      partitions: [days[0]!, ...days.slice(1).map((p) => ({ ...p, smallFiles: 0 }))],
    });
    // Removals are applied before updates: wait for both.
    const second = await waitFor('group 2 to go and group 1 to change', async () => {
      const list = (await queue.waiting(catalog)).filter((w) => w.task.table.name === 'events');
      const only = list[0]?.task;
      return list.length === 1 &&
        only?.type === 'merge' &&
        only.parameters.partitionSets?.[0]?.values.length === 1
        ? list
        : undefined;
    });
    expect(second.map((w) => w.task.id)).toEqual([`merge/${key}`]);
    const task = second[0]!.task;
    expect(task.type === 'merge' && expandPartitionSets(task.parameters.partitionSets!)).toEqual([
      [
        { column: 'region', value: 'eu' },
        { column: 'ts', transform: 'day', value: '2026-01-09' },
      ],
    ]);
    await producer.tombstone(stateTopic, key);
    await waitFor('the tasks to go', async () =>
      (await queue.waiting(catalog)).some((w) => w.task.table.name === 'events') ? undefined : true,
    );
  });
});

describe('Kafka → planner → task events', () => {
  it("sends a state's events in one produce request, in order", async () => {
    const table = sampleTableId({ catalog, name: 'batched' });
    const key = tableKey(table);
    // Two partition groups of at most 2 GiB: two merge tasks created, two planned events.
    const state = partitionedTableState([
      dayPartition('2026-01-09', 1),
      dayPartition('2026-01-08', 2),
      dayPartition('2026-01-07', 3),
    ]);
    await sendPartitionedState(table, state);
    const seen: { taskId: string; firstOffset: string }[] = [];
    const reader = kafka.kafka.consumer({ groupId: `${groupId}-batched` });
    await reader.connect();
    await reader.subscribe({ topic: eventsTopic, fromBeginning: true });
    await reader.run({
      eachMessage: ({ message }) => {
        if (message.key?.toString() === key) {
          const event = parseMessage(message.value ?? '', ['TaskPlanned']).payload as TaskEvent;
          // The record batch a message came in: one per partition of a produce request.
          const { firstOffset } = (message as unknown as { batchContext: { firstOffset: string } })
            .batchContext;
          seen.push({ taskId: event.taskId, firstOffset });
        }
        return Promise.resolve();
      },
    });
    await waitFor('both planned events', () =>
      Promise.resolve(seen.length >= 2 ? true : undefined),
    );
    await reader.disconnect();
    expect(seen.map((e) => e.taskId)).toEqual([`merge/${key}`, `merge/${key}#2`]);
    // One record batch: both went in one request (each awaited alone, they went in two).
    expect(new Set(seen.map((e) => e.firstOffset)).size).toBe(1);
    await producer.tombstone(stateTopic, key);
    await waitFor('the tasks to go', async () =>
      (await queue.waiting(catalog)).some((w) => w.task.table.name === 'batched')
        ? undefined
        : true,
    );
  });
});

describe('AgingPass', () => {
  it('runs on one replica per interval (Redis lock)', async () => {
    const lockKey = `test:${catalog}:aging-lock`;
    const make = () =>
      new AgingPass({
        queue,
        states,
        connection: redis,
        scoreOptions: DEFAULT_SCORE_OPTIONS,
        logger,
        intervalMs: 60_000,
        lockKey,
      });
    const results = await Promise.all([make().runOnce(), make().runOnce(), make().runOnce()]);
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    await redis.del(lockKey);
  });
});
