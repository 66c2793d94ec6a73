import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { createLogger, deleteTopics, EnvelopeProducer, KafkaClient } from '@icepack/runtime';
import { Redis } from 'ioredis';
import { ServiceProcess } from '@icepack/runtime/testing';
import type { InfraEnv } from '@icepack/test';

export const scannerEntry = resolve(import.meta.dirname, '..', 'main.ts');

/** Topic, group, queue and Redis names of one test: nothing shared with other runs. */
export interface TestNames {
  readonly id: string;
  readonly commits: string;
  readonly scanRequests: string;
  readonly tableState: string;
  readonly catalogs: string;
  readonly bindings: string;
  readonly dlq: string;
}

export function testNames(): TestNames {
  const id = `scn${randomBytes(4).toString('hex')}`;
  return {
    id,
    commits: `${id}.commits`,
    scanRequests: `${id}.scan-requests`,
    tableState: `${id}.table-state`,
    catalogs: `${id}.catalogs`,
    bindings: `${id}.bindings`,
    dlq: `${id}.dlq`,
  };
}

export interface ScannerEnvOptions {
  /** `{catalogs, bindings}` document; omitted → the scanner starts with none. */
  readonly bootstrap?: unknown;
  readonly extra?: Record<string, string>;
}

export function scannerEnv(
  infra: InfraEnv,
  names: TestNames,
  options: ScannerEnvOptions = {},
): Record<string, string> {
  return {
    ICEPACK_KAFKA_BROKERS: infra.kafkaBrokers.join(','),
    ICEPACK_REDIS_URL: infra.redisUrl,
    ICEPACK_LOG_LEVEL: 'info',
    ICEPACK_PROMETHEUS: 'on',
    ICEPACK_SCANNER_GROUP_ID: names.id,
    ICEPACK_SCANNER_COMMITS_TOPIC: names.commits,
    ICEPACK_SCANNER_SCAN_REQUESTS_TOPIC: names.scanRequests,
    ICEPACK_SCANNER_TABLE_STATE_TOPIC: names.tableState,
    ICEPACK_SCANNER_CATALOGS_TOPIC: names.catalogs,
    ICEPACK_SCANNER_BINDINGS_TOPIC: names.bindings,
    ICEPACK_SCANNER_DLQ_TOPIC: names.dlq,
    ICEPACK_SCANNER_DISCOVERY_QUEUE: `${names.id}-discovery`,
    ICEPACK_SCANNER_DEBOUNCE_QUEUE: `${names.id}-debounce`,
    ICEPACK_SCANNER_REDIS_PREFIX: `icepack:test:${names.id}`,
    ICEPACK_SCANNER_SCAN_PARTITIONS: '6',
    ICEPACK_SCANNER_LAG_INTERVAL: '2s',
    // The local REST catalog's warehouse is on this machine (file:).
    ICEPACK_LOCAL_CATALOGS: '*',
    ...(options.bootstrap === undefined
      ? {}
      : { ICEPACK_SCANNER_BOOTSTRAP: JSON.stringify(options.bootstrap) }),
    ...options.extra,
  };
}

/** Starts a scanner process and waits until it consumes (its log says so). */
export async function startScanner(env: Record<string, string>): Promise<ServiceProcess> {
  const service = await ServiceProcess.start({ entry: scannerEntry, env });
  await waitForLine(
    service,
    (line) => line.msg === 'metadata-scanner ready for work',
    'ready for work',
  );
  return service;
}

export async function waitForLine(
  service: ServiceProcess,
  predicate: (line: Record<string, unknown>) => boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = service.lines.find(predicate);
    if (line !== undefined) return line;
    if (Date.now() > deadline) throw new Error(`no log line: ${what}\n${service.describe()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Sum of a Prometheus counter's samples whose labels include `labels`. */
export function metricValue(
  service: ServiceProcess,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  return service.metric(name, labels);
}

/** A producer for commit events, scan requests and raw (malformed) messages. */
export async function testProducer(
  infra: InfraEnv,
): Promise<{ producer: EnvelopeProducer; close: () => Promise<void> }> {
  const logger = createLogger({ service: 'scanner-test', level: 'silent' });
  const kafka = new KafkaClient({ brokers: infra.kafkaBrokers, clientId: 'scanner-test', logger });
  const producer = new EnvelopeProducer(kafka);
  await producer.connect();
  return {
    producer,
    close: async () => {
      await producer.disconnect();
      await kafka.close();
    },
  };
}

export const until = async (
  check: () => Promise<boolean> | boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
};

/** Deletes a test's topics and Redis keys (the shared Kafka and Redis outlive the run). */
export async function cleanupTest(infra: InfraEnv, names: TestNames): Promise<void> {
  const logger = createLogger({ service: 'scanner-test', level: 'silent' });
  const kafka = new KafkaClient({ brokers: infra.kafkaBrokers, clientId: 'scanner-test', logger });
  try {
    await deleteTopics(kafka, [
      names.commits,
      names.scanRequests,
      names.tableState,
      names.catalogs,
      names.bindings,
      names.dlq,
    ]);
  } finally {
    await kafka.close();
  }
  const redis = new Redis(infra.redisUrl);
  try {
    for (const pattern of [`icepack:test:${names.id}:*`, `icepack:${names.id}-*`]) {
      const keys = await redis.keys(pattern);
      if (keys.length > 0) await redis.del(...keys);
    }
  } finally {
    redis.disconnect();
  }
}
