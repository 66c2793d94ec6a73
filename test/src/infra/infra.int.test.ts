import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

// The local stack the global setup started: every service is real, none is mocked.
const infra = inject('infra');

const ICEPACK_TOPICS = {
  'icepack.commits': 'delete',
  'icepack.scan-requests': 'delete',
  'icepack.task-events': 'delete',
  'icepack.dlq': 'delete',
  'icepack.table-state': 'compact',
  'icepack.catalogs': 'compact',
  'icepack.bindings': 'compact',
} as const;

const TOPIC_RESOURCE = 2; // ConfigResourceTypes.TOPIC

describe('Redis', () => {
  const redis = new Redis(infra.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  beforeAll(() => redis.connect());
  afterAll(() => redis.quit());

  it('answers PING', async () => {
    expect(await redis.ping()).toBe('PONG');
  });

  it('never evicts keys and keeps an append-only file, as BullMQ needs', async () => {
    expect(await redis.config('GET', 'maxmemory-policy')).toEqual([
      'maxmemory-policy',
      'noeviction',
    ]);
    expect(await redis.config('GET', 'appendonly')).toEqual(['appendonly', 'yes']);
    expect(await redis.config('GET', 'appendfsync')).toEqual(['appendfsync', 'everysec']);
  });
});

describe('Kafka', () => {
  const kafka = new Kafka({
    clientId: 'icepack-infra-test',
    brokers: [...infra.kafkaBrokers],
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  beforeAll(() => admin.connect());
  afterAll(() => admin.disconnect());

  it('has every Icepack topic with 3 partitions', async () => {
    const names = Object.keys(ICEPACK_TOPICS);
    const { topics } = await admin.fetchTopicMetadata({ topics: names });
    const partitions = Object.fromEntries(topics.map((t) => [t.name, t.partitions.length]));
    expect(partitions).toEqual(Object.fromEntries(names.map((n) => [n, 3])));
  });

  it('compacts the state topics and keeps the log topics', async () => {
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: Object.keys(ICEPACK_TOPICS).map((name) => ({
        type: TOPIC_RESOURCE,
        name,
        configNames: ['cleanup.policy'],
      })),
    });
    const policies = Object.fromEntries(
      resources.map((r) => [r.resourceName, r.configEntries[0]?.configValue]),
    );
    expect(policies).toEqual(ICEPACK_TOPICS);
  });

  it('delivers a produced message to a consumer group (kafkajs against Kafka 4)', async () => {
    const topic = `infra-test-${randomUUID()}`;
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    const consumer = kafka.consumer({ groupId: `infra-test-${randomUUID()}` });
    try {
      await producer.connect();
      await producer.send({ topic, messages: [{ key: 'table', value: 'hello' }] });
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      const received = await new Promise<string>((done, fail) => {
        consumer
          .run({
            eachMessage: ({ message }) => {
              done(`${message.key?.toString() ?? ''}=${message.value?.toString() ?? ''}`);
              return Promise.resolve();
            },
          })
          .catch(fail);
      });
      expect(received).toBe('table=hello');
    } finally {
      await consumer.disconnect();
      await producer.disconnect();
      await admin.deleteTopics({ topics: [topic] });
    }
  });
});

describe('Iceberg REST catalog', () => {
  const url = (path: string): string => `${infra.catalogUri}${path}`;

  it('serves /v1/config', async () => {
    const res = await fetch(url('/v1/config'));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { defaults?: unknown; overrides?: unknown };
    expect(body).toMatchObject({ defaults: {}, overrides: {} });
  });

  it('creates, lists and deletes a namespace', async () => {
    const name = `infra_test_${randomUUID().replaceAll('-', '')}`;
    const listed = async (): Promise<string[][]> => {
      const res = await fetch(url('/v1/namespaces'));
      expect(res.status).toBe(200);
      return ((await res.json()) as { namespaces: string[][] }).namespaces;
    };

    const created = await fetch(url('/v1/namespaces'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ namespace: [name], properties: { owner: 'icepack-infra-test' } }),
    });
    expect(created.status).toBe(200);
    expect(await listed()).toContainEqual([name]);

    const loaded = await fetch(url(`/v1/namespaces/${name}`));
    expect(loaded.status).toBe(200);
    expect(await loaded.json()).toMatchObject({ properties: { owner: 'icepack-infra-test' } });

    // The spec says 204; Iceberg 1.10's RESTCatalogServer answers 200. Clients accept both.
    const deleted = await fetch(url(`/v1/namespaces/${name}`), { method: 'DELETE' });
    expect([200, 204]).toContain(deleted.status);
    expect(await listed()).not.toContainEqual([name]);
    expect((await fetch(url(`/v1/namespaces/${name}`))).status).toBe(404);
  });
});
