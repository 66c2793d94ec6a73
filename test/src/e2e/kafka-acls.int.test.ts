// The brokers refuse a message forged by a principal that does not own its topic: the Icepack
// ACLs (packages/runtime/src/kafka/service-acls.ts) on the local broker's SASL/SCRAM listener,
// with each service's own user, through the same config path the services start with.
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import {
  applyAcls,
  baseConfigSchema,
  createLogger,
  deleteTopics,
  ensureTopics,
  EnvelopeConsumer,
  EnvelopeProducer,
  KafkaClient,
  kafkaTransport,
  loadConfig,
  localKafkaUsers,
  removeAcls,
  serviceAcls,
} from '@icepack/runtime';
import type { KafkaPrincipalRole } from '@icepack/runtime';
import { tempDir, waitUntil } from '@icepack/runtime/testing';
import {
  createEnvelope,
  MessageType,
  parseCatalog,
  serializeEnvelope,
  Topics,
  TopicSpecs,
} from '@icepack/types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const infra = inject('infra');
const logger = createLogger({
  service: 'kafka-acls-test',
  level: 'silent',
  destination: new Writable({ write: (_c, _e, cb) => cb() }),
});
const id = randomUUID().slice(0, 8);
type TopicKey = keyof typeof Topics;
// Unique topic and group names: the shared broker's real topics stay untouched.
const topics = Object.fromEntries(
  Object.entries(Topics).map(([key, name]) => [key, `acl-${id}.${name}`]),
) as Record<TopicKey, string>;
const users = localKafkaUsers();
const groupPrefixes = Object.fromEntries(
  Object.keys(users).map((role) => [role, `acl-${id}-${role}`]),
) as Record<KafkaPrincipalRole, string>;
const rules = serviceAcls({ users, topics, groupPrefixes });

// The super-user (plaintext) client sets up and cleans up; the services use the SASL listener.
const admin = new KafkaClient({ brokers: infra.kafkaBrokers, clientId: `acl-${id}`, logger });
const clients: KafkaClient[] = [];
const producers = new Map<KafkaPrincipalRole, EnvelopeProducer>();

/** A service's Kafka client from its environment, as openServiceCore builds it. */
function serviceClient(role: KafkaPrincipalRole, passwordFile: string): KafkaClient {
  const config = loadConfig(baseConfigSchema(role), {
    ICEPACK_KAFKA_BROKERS: infra.kafkaSaslBrokers.join(','),
    ICEPACK_REDIS_URL: infra.redisUrl,
    ICEPACK_KAFKA_SASL_MECHANISM: 'scram-sha-512',
    ICEPACK_KAFKA_SASL_USERNAME: users[role],
    ICEPACK_KAFKA_SASL_PASSWORD_FILE: passwordFile,
  });
  const client = new KafkaClient({
    brokers: config.ICEPACK_KAFKA_BROKERS,
    clientId: `acl-${id}-${role}`,
    logger,
    retries: 1,
    transport: kafkaTransport(config, (path) => readFileSync(path, 'utf8')),
  });
  clients.push(client);
  return client;
}

async function producerOf(role: KafkaPrincipalRole): Promise<EnvelopeProducer> {
  let producer = producers.get(role);
  if (producer === undefined) {
    producer = new EnvelopeProducer(serviceClient(role, join(infra.kafkaSaslDir, users[role])));
    await producer.connect();
    producers.set(role, producer);
  }
  return producer;
}

const catalog = parseCatalog({ name: `acl-${id}`, type: 'rest', uri: 'https://catalog.example' });
/** What a forger sends: a well-formed envelope, so only the broker's ACL stands in the way. */
const forged = serializeEnvelope(createEnvelope(MessageType.CatalogDefined, catalog.name, catalog));

beforeAll(async () => {
  await ensureTopics(
    admin,
    Object.entries(topics).map(([key, name]) => ({
      name,
      cleanupPolicy: TopicSpecs[key as TopicKey].cleanupPolicy,
      partitions: 1,
    })),
  );
  try {
    await applyAcls(admin, rules);
  } catch (error) {
    // A broker started by an older deploy/local/kafka.sh has no authorizer and no SASL port.
    throw new Error(
      `cannot create ACLs (${(error as Error).message}): restart the local Kafka with the ` +
        'current script (deploy/local/kafka.sh stop && deploy/local/kafka.sh up)',
    );
  }
});

afterAll(async () => {
  for (const producer of producers.values()) await producer.disconnect().catch(() => undefined);
  for (const client of clients) await client.close().catch(() => undefined);
  await removeAcls(admin, rules);
  await deleteTopics(admin, Object.values(topics));
  await admin.close();
});

describe('Kafka ACLs on the SASL/SCRAM listener', () => {
  it('lets each service write its own topics with its own principal', async () => {
    const provisioner = await producerOf('provisioner');
    await provisioner.publish(topics.catalogs, MessageType.CatalogDefined, catalog.name, catalog);
    await provisioner.sendRaw(topics.bindings, catalog.name, forged);
    await (await producerOf('metadata-scanner')).sendRaw(topics.tableState, 'k', forged);
    await (await producerOf('planner')).sendRaw(topics.taskEvents, 'k', forged);
    await (await producerOf('dispatcher')).sendRaw(topics.taskEvents, 'k', forged);
    await (await producerOf('commit-source')).sendRaw(topics.commits, 'k', forged);

    // The scanner reads the catalog the provisioner published, in its own consumer group.
    const seen: string[] = [];
    const consumer = new EnvelopeConsumer(
      serviceClient('metadata-scanner', join(infra.kafkaSaslDir, users['metadata-scanner'])),
      {
        groupId: `${groupPrefixes['metadata-scanner']}-catalogs`,
        topics: [topics.catalogs],
        producer: await producerOf('metadata-scanner'),
        dlqTopic: topics.dlq,
        handlers: { [MessageType.CatalogDefined]: (message) => void seen.push(message.key) },
      },
    );
    await consumer.start();
    try {
      await waitUntil('the scanner to read the catalog', () => seen.includes(catalog.name));
    } finally {
      await consumer.stop();
    }
  });

  it.each<[KafkaPrincipalRole, TopicKey]>([
    ['metadata-scanner', 'catalogs'],
    ['dispatcher', 'bindings'],
    ['planner', 'tableState'],
    ['metadata-scanner', 'taskEvents'],
    ['provisioner', 'taskEvents'],
    ['planner', 'commits'],
  ])('refuses a message the %s forges on %s', async (role, topic) => {
    const producer = await producerOf(role);
    await expect(producer.sendRaw(topics[topic], catalog.name, forged)).rejects.toThrow(
      /not authorized|authorization failed/i,
    );
  });

  it('refuses a wrong password at authentication, without printing it', async () => {
    const dir = tempDir(`icepack-acl-${id}-`);
    writeFileSync(join(dir, 'wrong'), 'not-the-password-7f3a');
    const health = await serviceClient('planner', join(dir, 'wrong')).health();
    expect(health.ok).toBe(false);
    expect(health.detail).toMatch(/SASL SCRAM SHA512 authentication failed/);
    expect(health.detail).not.toContain('not-the-password-7f3a');
  });
});
