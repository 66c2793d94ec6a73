import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createLogger, EnvelopeProducer, KafkaClient } from '@icepack/runtime';
import { ServiceProcess } from '@icepack/runtime/testing';
import { BULLMQ_PREFIX, queueNameForCatalog } from '@icepack/types';
import type { TableId, TaskEvent, TaskType } from '@icepack/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureKey } from '../fixtures/fixture-keys.ts';
import { fixtureTruth, generateFixtures } from '../fixtures/generate-fixtures.ts';
import type { TableTruth } from '../fixtures/ground-truth.ts';
import { tableTruth } from '../fixtures/table-truth.ts';
import { infraEnv } from '../infra/env.ts';
import { OtlpReceiver } from './otlp-receiver.ts';
import { PrivateStack } from './private-stack.ts';
import { TaskEventLog, until } from './task-event-log.ts';

// The whole system: the four services as their own processes on a Redis, Kafka and REST
// catalog of this file alone (started by deploy/local scripts on free ports, so stopping
// Kafka or Redis disturbs no other test), Spark through the dispatcher's local runner, and
// an OTLP receiver collecting every span. One system start is shared by every step below,
// in order: Spark is slow on two cores.

type Service = 'provisioner' | 'metadata-scanner' | 'planner' | 'dispatcher';
const repoRoot = join(import.meta.dirname, '..', '..', '..');
const entry = (service: Service) => join(repoRoot, 'services', service, 'src', 'main.ts');

const catalog = `e2e${randomBytes(4).toString('hex')}`;
const token = randomBytes(24).toString('hex');
const keys = [FixtureKey.manySnapshots, FixtureKey.morPositionDeletes, FixtureKey.sorted] as const;
const MINUTE = 60_000;

let stack: PrivateStack;
let otlp: OtlpReceiver;
let log: TaskEventLog;
let producer: EnvelopeProducer;
let kafka: KafkaClient;
let redis: Redis;
const running = new Map<Service, ServiceProcess>();
const before = new Map<string, TableTruth>();

function serviceEnv(service: Service): Record<string, string> {
  const env = infraEnv();
  const common = {
    ICEPACK_SERVICE_NAME: service,
    ICEPACK_LOG_LEVEL: 'info',
    ICEPACK_KAFKA_BROKERS: stack.kafkaBrokers.join(','),
    ICEPACK_REDIS_URL: stack.redisUrl,
    ICEPACK_API_TOKEN: token,
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
    ICEPACK_CACHE: env.cacheDir,
    ICEPACK_RUN: stack.runDir,
    ICEPACK_SPARK_JARS: env.sparkJars,
  };
  switch (service) {
    case 'provisioner':
      return {
        ...common,
        ICEPACK_PROVISIONER_MODE: 'local',
        ICEPACK_BOOTSTRAP_FILE: join(stack.runDir, 'bootstrap.yaml'),
        ICEPACK_LOCAL_CPU: '2',
        ICEPACK_LOCAL_MEMORY: '8Gi',
      };
    case 'metadata-scanner':
      // Discovery runs once at start; every later scan is caused by a commit or a task.
      return {
        ...common,
        ICEPACK_SCANNER_DISCOVERY_INTERVAL: '1h',
        ICEPACK_SCANNER_DEBOUNCE: '1s',
        ICEPACK_SCANNER_LAG_INTERVAL: '5s',
      };
    case 'planner':
      return {
        ...common,
        // Fixture snapshots are seconds old: expire everything older than a second; 20
        // snapshots are too many; more than 2 small files (or 5 delete files) call for a
        // rewrite, so the few files a commit adds start a task.
        ICEPACK_PLANNER_CATALOG_POLICY: JSON.stringify({
          [catalog]: {
            'icepack.history.expire.max-snapshot-age-ms': '1000',
            'icepack.snapshot-threshold': '20',
            'icepack.small-file-threshold': '2',
            'icepack.delete-file-threshold': '5',
          },
        }),
      };
    case 'dispatcher':
      return {
        ...common,
        ICEPACK_DISPATCHER_STATE_DIR: join(stack.runDir, 'dispatcher'),
        // Retry a retryable failure soon: the test waits for it.
        ICEPACK_TASK_BACKOFF: '5s',
      };
  }
}

async function start(service: Service): Promise<ServiceProcess> {
  const process = await ServiceProcess.start({
    entry: entry(service),
    env: serviceEnv(service),
    startTimeoutMs: 60_000,
  });
  running.set(service, process);
  await process.waitForReadyz((r) => r.status === 200, 2 * MINUTE);
  return process;
}

function describeSystem(): string {
  return [
    `task events:\n  ${log.lines.join('\n  ')}`,
    ...[...running].map(([name, p]) => `--- ${name} ---\n${p.describe()}`),
  ].join('\n');
}

const tableOf = (key: FixtureKey): TableId => {
  const truth = before.get(key);
  if (truth === undefined) throw new Error(`no ground truth for ${key}`);
  return truth.id;
};

const succeeded = (name: string, type: TaskType, after = 0): TaskEvent | undefined =>
  log
    .forTable(name)
    .find((e) => e.taskType === type && e.status === 'succeeded' && Date.parse(e.at) >= after);

/** True when the catalog's BullMQ queue has nothing waiting, delayed or running. */
async function queueIdle(): Promise<boolean> {
  const base = `${BULLMQ_PREFIX}:${queueNameForCatalog(catalog)}`;
  const [wait, active, prioritized, delayed] = await Promise.all([
    redis.llen(`${base}:wait`),
    redis.llen(`${base}:active`),
    redis.zcard(`${base}:prioritized`),
    redis.zcard(`${base}:delayed`),
  ]);
  return wait + active + prioritized + delayed === 0;
}

beforeAll(async () => {
  stack = await PrivateStack.start();
  otlp = await OtlpReceiver.start();
  const ground = await generateFixtures({
    catalogUri: stack.catalogUri,
    catalogName: catalog,
    only: keys,
    out: join(stack.runDir, 'ground-truth.json'),
  });
  for (const key of keys) before.set(key, fixtureTruth(ground, key));

  // The catalog and its group come from the provisioner's bootstrap file, as in production.
  await writeFile(
    join(stack.runDir, 'bootstrap.yaml'),
    [
      'catalogs:',
      `  - {name: ${catalog}, type: rest, uri: '${stack.catalogUri}'}`,
      'groups:',
      `  - name: ${catalog}`,
      `    catalog: ${catalog}`,
      "    cpu: '2'",
      '    memory: 4Gi',
      '    slots: 1',
      '    spark: {driverCores: 1, driverMemory: 1g, executorCores: 1, executorMemory: 1g, maxExecutors: 1}',
      '',
    ].join('\n'),
  );
  // The provisioner creates the topics; the others start once they exist.
  await start('provisioner');
  log = await TaskEventLog.start(stack.kafkaBrokers);
  await Promise.all([start('metadata-scanner'), start('planner'), start('dispatcher')]);

  kafka = new KafkaClient({
    brokers: [...stack.kafkaBrokers],
    clientId: 'e2e',
    logger: createLogger({ service: 'e2e', level: 'silent' }),
  });
  producer = new EnvelopeProducer(kafka);
  await producer.connect();
  redis = new Redis(stack.redisUrl, { maxRetriesPerRequest: null });
  // Redis goes away on purpose below; the probe's errors are expected then.
  redis.on('error', () => undefined);
}, 15 * MINUTE);

afterAll(async () => {
  for (const process of running.values()) await process.stop('SIGTERM');
  redis?.disconnect();
  await producer?.disconnect();
  await kafka?.close();
  await log?.stop();
  await otlp?.close();
  if (stack !== undefined) {
    await stack.stop();
    await rm(stack.runDir, { recursive: true, force: true });
  }
}, 5 * MINUTE);

describe('Icepack end to end: four services, real Kafka, Redis, REST catalog and Spark', () => {
  it(
    'compacts, sorts and expires the fixture tables without any manual call, keeping every row',
    async () => {
      const heavy = tableOf(FixtureKey.manySnapshots);
      const mor = tableOf(FixtureKey.morPositionDeletes);
      const sorted = tableOf(FixtureKey.sorted);
      await until(
        () =>
          succeeded(heavy.name, 'merge') !== undefined &&
          succeeded(heavy.name, 'cleanup') !== undefined &&
          succeeded(mor.name, 'merge') !== undefined &&
          succeeded(sorted.name, 'sort') !== undefined &&
          queueIdle(),
        'merge + cleanup of snapshot_heavy, merge of customers_mor, sort of sorted_events',
        12 * MINUTE,
        describeSystem,
      );
      expect(log.events.filter((e) => e.status === 'failed')).toEqual([]);
      expect(log.invalid).toEqual([]);

      for (const key of keys) {
        const was = before.get(key)!;
        const now = await tableTruth(was.id, { catalogUri: stack.catalogUri });
        // Maintenance never changes what the table holds.
        expect(now.recordCount, key).toBe(was.recordCount);
        expect(now.contentChecksum, key).toEqual(was.contentChecksum);
        // It does change how it is stored.
        expect(now.dataFiles.count, key).toBeLessThan(was.dataFiles.count);
        if (key === FixtureKey.manySnapshots) {
          expect(now.snapshotCount).toBeLessThan(was.snapshotCount);
          // A tagged snapshot is never expired.
          const tag = was.refs.find((r) => r.name === 'release-1');
          expect(now.refs).toContainEqual(tag);
          expect(now.snapshotIds).toContain(tag!.snapshotId);
        }
        if (key === FixtureKey.morPositionDeletes) {
          expect(now.positionDeleteFiles.count).toBeLessThan(was.positionDeleteFiles.count);
        }
        before.set(`${key}/after-maintenance`, now);
      }
      // What a person following `./dev up` reads: each task with what it changed.
      expect(log.lines).toContainEqual(
        expect.stringMatching(new RegExp(`^done +merge .*${heavy.name}: data files \\d+ → \\d+`)),
      );
      expect(log.lines).toContainEqual(
        expect.stringMatching(
          new RegExp(`^done +cleanup .*${heavy.name}: .*snapshots \\d+ → \\d+`),
        ),
      );
    },
    20 * MINUTE,
  );
});
