import type { KafkaClient } from './kafka-client.ts';

export interface TopicDefinition {
  readonly name: string;
  /** `compact` keeps the latest value per key (state topics); `delete` ages records out. */
  readonly cleanupPolicy: 'compact' | 'delete';
  /** Default 3. */
  readonly partitions?: number;
  /** Default 1 (one local broker); production sets 3. */
  readonly replicationFactor?: number;
  /** Extra topic configs, e.g. `{ 'retention.ms': '604800000' }`. */
  readonly configs?: Readonly<Record<string, string>>;
}

/**
 * Creates the topics that do not exist yet (idempotent; existing topics are left as they
 * are). Compacted topics get `min.compaction.lag.ms` so a fresh value is not compacted
 * away before slow consumers see it.
 */
export async function ensureTopics(
  client: KafkaClient,
  topics: readonly TopicDefinition[],
): Promise<string[]> {
  const admin = client.kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((topic) => !existing.has(topic.name));
    if (missing.length === 0) return [];
    await admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((topic) => ({
        topic: topic.name,
        numPartitions: topic.partitions ?? 3,
        replicationFactor: topic.replicationFactor ?? 1,
        configEntries: Object.entries({
          'cleanup.policy': topic.cleanupPolicy,
          ...(topic.cleanupPolicy === 'compact' ? { 'min.compaction.lag.ms': '60000' } : {}),
          ...topic.configs,
        }).map(([name, value]) => ({ name, value })),
      })),
    });
    const created = missing.map((topic) => topic.name);
    client.logger.info({ topics: created }, 'created topics');
    return created;
  } finally {
    await admin.disconnect();
  }
}

/** Deletes topics (tests clean up with it). Missing topics are ignored. */
export async function deleteTopics(client: KafkaClient, names: readonly string[]): Promise<void> {
  const admin = client.kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const present = names.filter((name) => existing.has(name));
    if (present.length > 0) await admin.deleteTopics({ topics: present });
  } finally {
    await admin.disconnect();
  }
}
