import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { createLogger, deleteTopics, EnvelopeProducer, KafkaClient } from '@icepack/runtime';
import { ServiceProcess, waitUntil } from '@icepack/runtime/testing';
import { BULLMQ_PREFIX, queueNameForCatalog, sampleTableId, tableKey } from '@icepack/types';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { tableState } from './domain/state-fixtures.ts';

// The planner as its own process with Prometheus on: real table states on a real Kafka topic
// move its counters and its queue gauges, read from GET /metrics as Prometheus would.

const infra = inject('infra');
const suffix = randomUUID().slice(0, 8);
const catalog = `metrics-${suffix}`;
const topics = {
  state: `test.planner-metrics.${suffix}.table-state`,
  events: `test.planner-metrics.${suffix}.task-events`,
  dlq: `test.planner-metrics.${suffix}.dlq`,
  catalogs: `test.planner-metrics.${suffix}.catalogs`,
};
const policyCatalog = `policy-${suffix}`;
const token = 'test-token-0123456789abcdef';
const logger = createLogger({ service: 'planner-metrics-test', level: 'silent' });

let kafka: KafkaClient;
let producer: EnvelopeProducer;
let planner: ServiceProcess;

const until = (what: string, check: () => Promise<boolean>, timeoutMs?: number) =>
  waitUntil(what, check, { timeoutMs, context: () => planner.describe() });

beforeAll(async () => {
  kafka = new KafkaClient({ brokers: infra.kafkaBrokers, clientId: `pm-${suffix}`, logger });
  producer = new EnvelopeProducer(kafka);
  await producer.connect();
  planner = await ServiceProcess.start({
    entry: resolve(import.meta.dirname, 'main.ts'),
    env: {
      ICEPACK_KAFKA_BROKERS: infra.kafkaBrokers.join(','),
      ICEPACK_REDIS_URL: infra.redisUrl,
      ICEPACK_API_TOKEN: token,
      ICEPACK_PROMETHEUS: 'on',
      ICEPACK_PLANNER_GROUP_ID: `test-planner-metrics-${suffix}`,
      ICEPACK_PLANNER_TABLE_STATE_TOPIC: topics.state,
      ICEPACK_PLANNER_TASK_EVENTS_TOPIC: topics.events,
      ICEPACK_PLANNER_DLQ_TOPIC: topics.dlq,
      ICEPACK_PLANNER_CATALOGS_TOPIC: topics.catalogs,
      ICEPACK_PLANNER_QUEUE_METRICS_INTERVAL: '500ms',
    },
  });
  await until('the planner to consume', () =>
    Promise.resolve(planner.lines.some((l) => l.msg === 'planner ready for work')),
  );
});

afterAll(async () => {
  await planner?.stop('SIGTERM');
  await deleteTopics(kafka, Object.values(topics));
  const admin = kafka.kafka.admin();
  await admin.connect();
  await admin.deleteGroups([`test-planner-metrics-${suffix}`]).catch(() => undefined);
  await admin.disconnect();
  await producer.disconnect();
  await kafka.close();
  const redis = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue(queueNameForCatalog(catalog), {
    connection: redis,
    prefix: BULLMQ_PREFIX,
  });
  await queue.obliterate({ force: true });
  await queue.close();
  // The planner's shared state keys: only this test's table and catalog.
  const keys = [
    tableKey(sampleTableId({ catalog, name: 't' })),
    tableKey(sampleTableId({ catalog: policyCatalog, name: 'p' })),
  ];
  await redis.hdel('icepack:planner:table-states', ...keys);
  await redis.hdel('icepack:planner:table-states:heads', ...keys);
  await redis.srem('icepack:planner:catalogs', catalog, policyCatalog);
  await redis.quit();
});

describe('planner metrics on /metrics', () => {
  it('count the task a table state created, the state, and show it waiting in the queue', async () => {
    const table = sampleTableId({ catalog, name: 't' });
    const state = tableState({ smallFiles: 80, newDataFiles: 5 }, { table });
    await producer.publish(topics.state, 'TableScanned', tableKey(table), state);

    const created = { catalog, task_type: 'merge', action: 'created' };
    await until(
      'the created merge to be counted',
      async () => (await planner.metric('icepack_planner_tasks_total', created)) >= 1,
    );
    expect(await planner.metric('icepack_planner_tasks_total', created)).toBe(1);
    expect(
      await planner.metric('icepack_planner_table_states_total', { catalog, outcome: 'planned' }),
    ).toBe(1);
    expect(await planner.metric('icepack_planner_plan_duration_seconds_count', { catalog })).toBe(
      1,
    );
    await until(
      'the queue gauge to show the waiting task',
      async () =>
        (await planner.metric('icepack_planner_queue_tasks', { catalog, state: 'waiting' })) === 1,
    );

    // The same state again (a redelivery) changes nothing and is counted as such.
    await producer.publish(topics.state, 'TableScanned', tableKey(table), state);
    await until(
      'the duplicate to be counted',
      async () =>
        (await planner.metric('icepack_planner_table_states_total', {
          catalog,
          outcome: 'duplicate',
        })) === 1,
    );
    expect(await planner.metric('icepack_planner_tasks_total', created)).toBe(1);
  });

  it('count a table state it cannot read as dead-lettered, with the reason class', async () => {
    await producer.sendRaw(topics.state, `${catalog}.x.y`, '{not json');
    const labels = {
      messaging_destination_name: topics.state,
      icepack_message_outcome: 'dead-lettered',
      icepack_dlq_reason: 'invalid-message',
    };
    await until(
      'the dead-lettered message to be counted',
      async () => (await planner.metric('icepack_kafka_messages_total', labels)) === 1,
    );
  });

  it('serve /metrics without the API token, and with no table name in it', async () => {
    const response = await fetch(`${planner.url}/metrics`);
    expect(response.status).toBe(200);
    const body = await response.text();
    expect(body).toContain(`catalog="${catalog}"`);
    // The oldest waiting task's age, under its Prometheus name (the task of the first test).
    expect(body).toMatch(
      new RegExp(`^icepack_planner_oldest_task_age_seconds\\{[^}]*catalog="${catalog}"`, 'm'),
    );
    expect(body).not.toContain(tableKey(sampleTableId({ catalog, name: 't' })));
    expect((await fetch(`${planner.url}/v1/catalogs`)).status).toBe(401);
  });
});

// Not a metric, but the same planner process: the policy comes from the catalog definition on
// the catalogs topic (issue 17), with its namespace override, and a state measured under
// another small-file bound is reported in the explanation.
describe('planner policy from the catalog definition', () => {
  it('resolves table > namespace > catalog from icepack.catalogs and reports a state measured under another bound', async () => {
    const MiB = 1024 * 1024;
    await producer.publish(topics.catalogs, 'CatalogDefined', policyCatalog, {
      name: policyCatalog,
      type: 'rest',
      uri: infra.catalogUri,
      auth: { type: 'none' },
      properties: {},
      policy: {
        settings: { 'icepack.small-file-threshold': '40' },
        namespaces: { sales: { 'icepack.target-file-size-bytes': String(128 * MiB) } },
      },
    });
    const table = sampleTableId({ catalog: policyCatalog, name: 'p' });
    // Measured as the old scanner did for this table: files under 384 MiB counted as small.
    const state = tableState({}, { table });
    expect(state.files.smallFileThresholdBytes).toBe(384 * MiB);
    await producer.publish(topics.state, 'TableScanned', tableKey(table), state);

    const path = `/v1/tables/${encodeURIComponent(tableKey(table))}/plan`;
    interface Plan {
      policy?: { smallFileThreshold: number; minFileSizeBytes: number };
      problems?: { key: string; source: string; value: string }[];
    }
    let plan: Plan = {};
    await until('the plan to use the catalog definition’s policy', async () => {
      const response = await fetch(`${planner.url}${path}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      if (response.status !== 200) return false;
      plan = (await response.json()) as Plan;
      return plan.policy?.smallFileThreshold === 40;
    });
    expect(plan.policy).toMatchObject({ smallFileThreshold: 40, minFileSizeBytes: 96 * MiB });
    expect(plan.problems).toEqual([
      expect.objectContaining({
        key: 'icepack.min-file-size-bytes',
        source: 'scan',
        value: String(384 * MiB),
      }),
    ]);
  });
});
