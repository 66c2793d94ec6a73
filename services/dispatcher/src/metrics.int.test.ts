import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createLogger, deleteTopics, EnvelopeProducer, KafkaClient } from '@icepack/runtime';
import { ServiceProcess, waitUntil } from '@icepack/runtime/testing';
import {
  BULLMQ_PREFIX,
  queueNameForCatalog,
  sampleMergeTask,
  taskJobId,
  type Task,
} from '@icepack/types';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testBinding } from './adapters/testing/test-binding.ts';

// The dispatcher as its own process with Prometheus on, fed a catalog and a binding on its
// topics as the provisioner would: real tasks in real queues move its metrics, read from
// GET /metrics. One catalog's group is too small for any job (the task waits for quota);
// the other runs a real local Spark job for a table that does not exist (it fails).

const infra = inject('infra');
const id = Math.random().toString(36).slice(2, 8);
const tight = `mq${id}`;
const roomy = `mr${id}`;
const topics = {
  catalogs: `test.dispatch-metrics.${id}.catalogs`,
  bindings: `test.dispatch-metrics.${id}.bindings`,
};
const logger = createLogger({ service: 'dispatch-metrics-test', level: 'silent' });

let kafka: KafkaClient;
let producer: EnvelopeProducer;
let redis: Redis;
let stateDir: string;
let dispatcher: ServiceProcess;
const queues: Queue[] = [];

function missingTableTask(catalog: string): Task {
  const table = { catalog, namespace: [`nx_${id}`], name: 'missing' };
  return sampleMergeTask({ id: taskJobId(table, 'merge'), table });
}

async function enqueue(task: Task): Promise<void> {
  const queue = new Queue(queueNameForCatalog(task.table.catalog), {
    connection: redis,
    prefix: BULLMQ_PREFIX,
  });
  queues.push(queue);
  await queue.add(task.type, task, { jobId: task.id, removeOnComplete: true, removeOnFail: true });
}

const until = (what: string, check: () => Promise<boolean>, timeoutMs?: number) =>
  waitUntil(what, check, { timeoutMs, context: () => dispatcher.describe() });

beforeAll(async () => {
  kafka = new KafkaClient({ brokers: infra.kafkaBrokers, clientId: `dm-${id}`, logger });
  producer = new EnvelopeProducer(kafka);
  await producer.connect();
  redis = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
  stateDir = await mkdtemp(join(tmpdir(), 'icepack-dispatch-metrics-'));
  for (const catalog of [tight, roomy]) {
    await producer.publish(topics.catalogs, 'CatalogDefined', catalog, {
      name: catalog,
      type: 'rest',
      uri: infra.catalogUri,
    });
  }
  // Less cpu and memory than the smallest job (a 1-core driver and one executor).
  await producer.publish(
    topics.bindings,
    'BindingUpdated',
    tight,
    testBinding(tight, { cpu: '500m', memory: '512Mi', slots: 3, smallSlots: 0 }),
  );
  await producer.publish(
    topics.bindings,
    'BindingUpdated',
    roomy,
    testBinding(roomy, { slots: 1, smallSlots: 1 }),
  );
  dispatcher = await ServiceProcess.start({
    entry: resolve(import.meta.dirname, 'main.ts'),
    env: {
      ICEPACK_KAFKA_BROKERS: infra.kafkaBrokers.join(','),
      ICEPACK_REDIS_URL: infra.redisUrl,
      ICEPACK_PROMETHEUS: 'on',
      ICEPACK_DISPATCHER_CATALOGS_TOPIC: topics.catalogs,
      ICEPACK_DISPATCHER_BINDINGS_TOPIC: topics.bindings,
      ICEPACK_DISPATCHER_CATALOGS: `${tight},${roomy}`,
      ICEPACK_DISPATCHER_STATE_DIR: stateDir,
      ICEPACK_SPARK_JARS: infra.sparkJars,
      ICEPACK_QUOTA_WAIT: '1s',
    },
  });
  await until(
    'both catalog workers to start',
    async () =>
      (await dispatcher.metric('icepack_dispatcher_slots', { catalog: tight })) === 3 &&
      // Both lanes: slots + smallSlots.
      (await dispatcher.metric('icepack_dispatcher_slots', { catalog: roomy })) === 2,
  );
});

afterAll(async () => {
  await dispatcher?.stop('SIGTERM');
  for (const queue of queues) {
    await queue.obliterate({ force: true });
    await queue.close();
  }
  await redis?.del(`icepack:budget:${tight}`, `icepack:budget:${roomy}`);
  await redis?.quit();
  await deleteTopics(kafka, Object.values(topics));
  await producer?.disconnect();
  await kafka?.close();
  await rm(stateDir, { recursive: true, force: true });
});

describe('dispatcher metrics on /metrics', () => {
  it('count a task put back to wait for quota, and no start for it', async () => {
    await enqueue(missingTableTask(tight));
    const labels = { catalog: tight, task_type: 'merge' };
    await until(
      'a quota wait to be counted',
      async () => (await dispatcher.metric('icepack_dispatcher_quota_waits_total', labels)) >= 1,
    );
    expect(await dispatcher.metric('icepack_dispatcher_tasks_started_total', labels)).toBe(0);
  });

  it('count the start, the failed end and the duration of a real run', async () => {
    await enqueue(missingTableTask(roomy));
    const labels = { catalog: roomy, task_type: 'merge' };
    await until(
      'the failed run to be counted',
      async () =>
        (await dispatcher.metric('icepack_dispatcher_tasks_finished_total', {
          ...labels,
          outcome: 'failed',
        })) === 1,
      300_000,
    );
    expect(await dispatcher.metric('icepack_dispatcher_tasks_started_total', labels)).toBe(1);
    expect(
      await dispatcher.metric('icepack_dispatcher_task_duration_seconds_count', {
        ...labels,
        outcome: 'failed',
      }),
    ).toBe(1);
    // The run is over: no slot held, nothing counted as rewritten.
    expect(await dispatcher.metric('icepack_dispatcher_slots_in_use', { catalog: roomy })).toBe(0);
    expect(await dispatcher.metric('icepack_dispatcher_rewritten_bytes_total', labels)).toBe(0);
  });
});
