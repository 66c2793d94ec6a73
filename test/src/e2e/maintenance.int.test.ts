import { randomBytes } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import {
  currentSnapshot,
  FileContent,
  isLive,
  localPath,
  ManifestCache,
  ManifestContent,
  readManifestEntries,
  readSnapshotManifests,
  RestCatalog,
} from '@icepack/iceberg';
import type { Snapshot } from '@icepack/iceberg';
import { createLogger, EnvelopeProducer, KafkaClient } from '@icepack/runtime';
import type { ServiceProcess } from '@icepack/runtime/testing';
import {
  BULLMQ_PREFIX,
  createEnvelope,
  queueNameForCatalog,
  serializeEnvelope,
  tableKey,
  Topics,
} from '@icepack/types';
import type { TableId, TaskEvent, TaskType } from '@icepack/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogPropertyArgs } from '../fixtures/fixture-scripts.ts';
import { FixtureKey } from '../fixtures/fixture-keys.ts';
import { fixtureTruth, generateFixtures } from '../fixtures/generate-fixtures.ts';
import type { TableTruth } from '../fixtures/ground-truth.ts';
import { runPython } from '../fixtures/run-python.ts';
import { tableTruth } from '../fixtures/table-truth.ts';
import { infraEnv } from '../infra/env.ts';
import { OtlpReceiver } from './otlp-receiver.ts';
import type { ReceivedSpan } from './otlp-receiver.ts';
import { ownReadProperties, PrivateStack, s3Objects, startService } from './private-stack.ts';
import type { PrivateS3, Service } from './private-stack.ts';
import { TaskEventLog, until } from './task-event-log.ts';

// The whole system: the four services as their own processes on a Redis, Kafka and REST
// catalog of this file alone (started by deploy/local scripts on free ports, so stopping
// Kafka or Redis disturbs no other test), Spark through the dispatcher's local runner, and
// an OTLP receiver collecting every span. One system start is shared by every step below,
// in order: Spark is slow on two cores.
//
// The tables live on the stack's local filesystem catalog, or — with ICEPACK_E2E_STORAGE=s3 —
// on its S3 store (moto) behind a second REST catalog (Iceberg's S3FileIO), as the lake
// simulator's `--storage s3`: the same steps and checks, plus where the files landed.

/** `local` (default) or `s3`: where the tables of this run live. */
const STORAGE = storageOf(process.env.ICEPACK_E2E_STORAGE);

function storageOf(value: string | undefined): 'local' | 's3' {
  if (value === undefined || value === '' || value === 'local') return 'local';
  if (value === 's3') return 's3';
  throw new Error(`ICEPACK_E2E_STORAGE must be local or s3, not ${JSON.stringify(value)}`);
}

/** Where the tables live: their catalog, its client properties, and the S3 store if any. */
interface Lake {
  readonly catalogUri: string;
  readonly properties: Readonly<Record<string, string>>;
  readonly s3?: PrivateS3;
}

const catalog = `e2e${randomBytes(4).toString('hex')}`;
const token = randomBytes(24).toString('hex');
const keys = [FixtureKey.manySnapshots, FixtureKey.morPositionDeletes, FixtureKey.sorted] as const;
const MINUTE = 60_000;
/** One small Spark job at a time: the machine has two cores. */
const SPARK = {
  driverCores: 1,
  driverMemory: '1g',
  executorCores: 1,
  executorMemory: '1g',
  maxExecutors: 1,
};

let stack: PrivateStack;
let lake: Lake;
let otlp: OtlpReceiver;
let log: TaskEventLog;
let producer: EnvelopeProducer;
let kafka: KafkaClient;
let redis: Redis;
const appended = new Map<string, string>();
const running = new Map<Service, ServiceProcess>();
const before = new Map<string, TableTruth>();

function serviceEnv(service: Service): Record<string, string> {
  const common = {
    ...stack.serviceEnv(service, token),
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
    // The private catalog's tables are on this machine's disk, as in the local stack; on S3
    // no catalog is local (a file: location would be refused) and the services (and the
    // dispatcher's Spark jobs) take the keys from the AWS SDK chain, here the environment.
    ...(lake.s3 === undefined ? { ICEPACK_LOCAL_CATALOGS: catalog } : lake.s3.keys),
  };
  switch (service) {
    case 'provisioner':
      return {
        ...common,
        ICEPACK_PROVISIONER_MODE: 'local',
        ICEPACK_BOOTSTRAP_FILE: stack.bootstrapFile,
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
        // rewrite, so the few files a commit adds start a task — also minutes after the
        // table's last merge (no minimum interval between merges).
        ICEPACK_PLANNER_CATALOG_POLICY: JSON.stringify({
          [catalog]: {
            'icepack.history.expire.max-snapshot-age-ms': '1000',
            'icepack.snapshot-threshold': '20',
            'icepack.small-file-threshold': '2',
            'icepack.delete-file-threshold': '5',
            'icepack.merge.min-interval': '0',
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

/**
 * The tables' live data files — among them the ones maintenance rewrote — are where the lake
 * is: on S3, each is an object of the store listed through the S3 API with its size, and no
 * file of these tables is on this machine's disk (the stack's directory, where the local
 * catalog's warehouse is); on the filesystem, each is a file under the local warehouse.
 */
async function expectFilesWhereTheLakeIs(): Promise<void> {
  const local = await filesUnder(stack.runDir);
  for (const key of keys) {
    const table = tableOf(key);
    const files = await liveDataFiles(table);
    const history = await snapshotsOf(table);
    const rewrites = new Set(
      history.filter((s) => s.operation === 'replace').map((s) => s.snapshotId),
    );
    expect(files.length, key).toBe(before.get(`${key}/after-maintenance`)!.dataFiles.count);
    // Maintenance wrote some of them.
    expect(
      files.filter((f) => rewrites.has(f.snapshotId)).length,
      `${key}: live data files written by a rewrite`,
    ).toBeGreaterThan(0);
    const location = before.get(key)!.location;
    if (lake.s3 !== undefined) {
      expect(location, key).toMatch(new RegExp(`^s3://${lake.s3.bucket}/`));
      const listed = new Map(
        (await s3Objects(lake.s3, `${location}/`)).map((o) => [o.location, o.size]),
      );
      for (const file of files) {
        expect(listed.get(file.path.replace(/^s3[an]:/, 's3:')), file.path).toBe(file.size);
      }
      const names = new Set(files.map((f) => f.path.slice(f.path.lastIndexOf('/') + 1)));
      expect(
        local.filter((path) => names.has(path.slice(path.lastIndexOf('/') + 1))),
        `${key}: data files on the local disk`,
      ).toEqual([]);
    } else {
      const onDisk = new Set(local);
      for (const file of files) {
        expect(file.path, key).toMatch(/^file:/);
        expect(onDisk.has(localPath(file.path)), file.path).toBe(true);
      }
    }
  }
}

/**
 * On S3, the store's keys reached the services and their Spark jobs through the environment
 * only: they are in no task event (Kafka), BullMQ job, service log line, nor any file of the
 * dispatcher's state directory (run specs, Spark logs, the launch record).
 */
async function expectKeysNowhere(): Promise<void> {
  if (lake.s3 === undefined) return;
  const secrets = [lake.s3.keys.AWS_ACCESS_KEY_ID, lake.s3.keys.AWS_SECRET_ACCESS_KEY];
  const leaks = (where: string, text: string) =>
    secrets.filter((secret) => text.includes(secret)).map(() => where);
  const found = [...leaks('task events', JSON.stringify(log.events))];
  for (const [name, service] of running) {
    found.push(...leaks(`${name} log`, JSON.stringify([service.lines, service.stderr])));
  }
  for (const key of await redis.keys(`${BULLMQ_PREFIX}:*`)) {
    if ((await redis.type(key)) === 'hash') {
      found.push(...leaks(`redis ${key}`, JSON.stringify(await redis.hgetall(key))));
    }
  }
  for (const file of await filesUnder(join(stack.runDir, 'dispatcher'))) {
    found.push(...leaks(file, await readFile(file, 'latin1')));
  }
  expect(found).toEqual([]);
}

const start = (service: Service): Promise<ServiceProcess> =>
  startService(service, serviceEnv(service), running);

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

const ENDINGS: readonly TaskEvent['status'][] = ['succeeded', 'failed', 'cancelled'];
/** The statuses the dispatcher publishes while it runs a task. */
const RUN_STATUSES: readonly TaskEvent['status'][] = ['started', 'retrying', ...ENDINGS];

/**
 * The run `event` belongs to: its `runId`, or — for the planner's events, which have none —
 * that of the task's next event that has one. Task ids are per (table, type), so every run of
 * a task type on a table has the same id; the run id names one launch (one attempt) and
 * stays the same when a restarted dispatcher re-attaches to it. A batch's tasks share its
 * launch, so one task's run is (task id, run id) (docs/messages.md).
 */
function runIdOf(event: TaskEvent): string | undefined {
  if (event.runId !== undefined) return event.runId;
  return log.events
    .slice(log.events.indexOf(event) + 1)
    .find((e) => e.taskId === event.taskId && e.runId !== undefined)?.runId;
}

/**
 * The events of the task run `first` belongs to (see {@link runIdOf}), in the order published:
 * its task's events of that launch, not those of other tasks batched into it.
 */
function runEvents(first: TaskEvent): TaskEvent[] {
  const runId = runIdOf(first);
  return runId === undefined
    ? []
    : log.events.filter((e) => e.runId === runId && e.taskId === first.taskId);
}

/**
 * The run's final event: its ending (succeeded, failed or cancelled), or its last event once
 * the task went on to another run (a new attempt after a retryable failure).
 */
function endOf(first: TaskEvent): TaskEvent | undefined {
  const run = runEvents(first);
  const ending = run.find((e) => ENDINGS.includes(e.status));
  if (ending !== undefined || run.length === 0) return ending;
  const last = run.at(-1)!;
  const movedOn = log.events
    .slice(log.events.indexOf(last) + 1)
    .some((e) => e.taskId === last.taskId && e.runId !== undefined && e.runId !== last.runId);
  return movedOn ? last : undefined;
}

/**
 * The first hop of `hops` (`service: span name`) missing from trace `traceId` as a descendant
 * of the hop before it; undefined when the whole chain is there.
 */
function missingHop(traceId: string, hops: readonly string[]): string | undefined {
  const spans = otlp.trace(traceId);
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const descends = (span: ReceivedSpan, ancestor: ReceivedSpan): boolean => {
    for (let p = byId.get(span.parentSpanId ?? ''); p; p = byId.get(p.parentSpanId ?? '')) {
      if (p.spanId === ancestor.spanId) return true;
    }
    return false;
  };
  let previous: ReceivedSpan[] | undefined;
  for (const hop of hops) {
    const found = spans.filter(
      (s) =>
        `${s.service}: ${s.name}` === hop &&
        (previous === undefined || previous.some((p) => descends(s, p))),
    );
    if (found.length === 0) return hop;
    previous = found;
  }
  return undefined;
}

/** Spans of a trace with their parents, for a failure message. */
const spansOf = (traceId: string): string =>
  otlp
    .trace(traceId)
    .map((s) => `${s.service}: ${s.name} ${s.spanId} (parent ${String(s.parentSpanId)})`)
    .join('\n');

/** A table's first event of one of `types` with `status`, published at or after `since`. */
const firstSince = (
  name: string,
  types: readonly TaskType[],
  status: TaskEvent['status'],
  since: number,
): TaskEvent | undefined =>
  log
    .forTable(name)
    .find((e) => types.includes(e.taskType) && e.status === status && Date.parse(e.at) >= since);

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

interface Launch {
  readonly taskId: string;
  readonly runId: string;
  readonly attempt: number;
  readonly pid: number;
  readonly startedAt: number;
}

/** Every Spark launch so far, from the local runner's `runs.log` files (one line a launch). */
async function launches(): Promise<Launch[]> {
  const dir = join(stack.runDir, 'dispatcher');
  const all: Launch[] = [];
  for (const run of await readdir(dir).catch(() => [])) {
    const text = await readFile(join(dir, run, 'runs.log'), 'utf8').catch(() => '');
    for (const line of text.split('\n').filter((l) => l.trim() !== '')) {
      all.push(JSON.parse(line) as Launch);
    }
  }
  return all.sort((x, y) => x.startedAt - y.startedAt);
}

/** Kills a detached Spark run's process group, if `pid` is still that run (not a reused pid). */
async function stopRun(pid: number, runDir: string): Promise<void> {
  const cmdline = await readFile(`/proc/${String(pid)}/cmdline`, 'utf8').catch(() => '');
  if (!cmdline.includes(runDir)) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Gone meanwhile.
  }
}

/** The launch of one run (`runId` of its task events). */
async function launchOf(runId: string | undefined): Promise<Launch | undefined> {
  return (await launches()).find((l) => l.runId === runId);
}

/** A table's snapshots, oldest first, from the REST catalog (no Spark session needed). */
async function snapshotsOf(table: TableId): Promise<Snapshot[]> {
  const loaded = await new RestCatalog({ name: catalog, uri: lake.catalogUri }).loadTable(table);
  if (loaded.status !== 'loaded') throw new Error(`${table.name} did not load: ${loaded.status}`);
  return [...loaded.table.metadata.snapshots].sort((a, b) => a.timestampMs - b.timestampMs);
}

/** Stops Kafka or Redis of the private stack for a few seconds, then starts it again. */
async function briefOutage(script: 'kafka.sh' | 'redis.sh'): Promise<void> {
  await stack.script(script, 'stop');
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  await stack.script(script, 'up');
}

/** The snapshot the writer's commit (second step) added to this table. */
function appendedTo(table: TableId): string {
  const id = appended.get([...table.namespace, table.name].join('.'));
  if (id === undefined) throw new Error(`no commit was made to ${table.name}`);
  return id;
}

function traceparent(): { header: string; traceId: string } {
  const traceId = randomBytes(16).toString('hex');
  return { header: `00-${traceId}-${randomBytes(8).toString('hex')}-01`, traceId };
}

/** A commit event as a writer's hook would send it, with the writer's trace context. */
async function commitEvent(table: TableId, snapshotId: string, header?: string): Promise<void> {
  const envelope = createEnvelope('CommitObserved', tableKey(table), {
    table,
    snapshotId,
    operation: 'append',
  });
  await producer.sendRaw(
    Topics.commits,
    tableKey(table),
    serializeEnvelope(envelope),
    header === undefined ? {} : { traceparent: header },
  );
}

/** One Spark commit per table adding a few small files, as a streaming writer does. */
async function appendFiles(tables: readonly TableId[]): Promise<Record<string, string>> {
  const env = infraEnv();
  const output = await runPython(
    join(import.meta.dirname, 'append_files.py'),
    [
      '--catalog-uri',
      lake.catalogUri,
      '--catalog-name',
      catalog,
      ...catalogPropertyArgs(lake.properties),
      '--files',
      '4',
      ...tables.flatMap((t) => ['--table', [...t.namespace, t.name].join('.')]),
    ],
    {
      python: env.python,
      env: { ...lake.s3?.keys, ICEPACK_SPARK_JARS: env.sparkJars },
      timeoutMs: 5 * MINUTE,
    },
  );
  const last = output.trim().split('\n').at(-1) ?? '{}';
  return JSON.parse(last) as Record<string, string>;
}

/**
 * The live data files of a table's current snapshot, read from its manifests through the
 * table's own file IO (on S3: S3FileIO with this process's keys given as properties).
 */
async function liveDataFiles(
  table: TableId,
): Promise<{ path: string; size: number; snapshotId: string }[]> {
  const client = new RestCatalog({
    name: catalog,
    uri: lake.catalogUri,
    properties: lake.s3 === undefined ? {} : ownReadProperties(lake.s3),
  });
  const loaded = await client.loadTable(table);
  if (loaded.status !== 'loaded') throw new Error(`${table.name} did not load: ${loaded.status}`);
  const snapshot = currentSnapshot(loaded.table.metadata);
  if (snapshot === null) return [];
  const cache = new ManifestCache();
  const files = [];
  for (const manifest of await readSnapshotManifests(loaded.table.io, snapshot, cache)) {
    if (manifest.content !== ManifestContent.data) continue;
    for (const entry of await readManifestEntries(loaded.table.io, manifest, cache)) {
      if (isLive(entry) && entry.content === FileContent.data) {
        files.push({
          path: entry.filePath,
          size: entry.fileSizeInBytes,
          snapshotId: entry.snapshotId,
        });
      }
    }
  }
  return files;
}

/** Every regular file under `dir`, recursively (none when it does not exist). */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

beforeAll(async () => {
  stack = await PrivateStack.start();
  if (STORAGE === 's3') {
    const s3 = await stack.startS3();
    lake = { catalogUri: s3.catalogUri, properties: s3.properties, s3 };
  } else {
    lake = { catalogUri: stack.catalogUri, properties: {} };
  }
  otlp = await OtlpReceiver.start();
  const ground = await generateFixtures({
    catalogUri: lake.catalogUri,
    catalogName: catalog,
    properties: lake.properties,
    env: lake.s3?.keys,
    only: keys,
    out: join(stack.runDir, 'ground-truth.json'),
  });
  for (const key of keys) before.set(key, fixtureTruth(ground, key));

  // The catalog and its group come from the provisioner's bootstrap file, as in production.
  await stack.writeBootstrap(
    catalog,
    { cpu: '2', memory: '4Gi', slots: 1, spark: SPARK },
    { uri: lake.catalogUri, properties: lake.properties },
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
  // A Spark run outlives its dispatcher by design: stop any a failed step left running.
  if (stack !== undefined) {
    for (const { pid } of await launches()) await stopRun(pid, stack.runDir);
  }
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

describe(`Icepack end to end (tables on ${STORAGE === 's3' ? 'S3' : 'the local filesystem'}): four services, real Kafka, Redis, REST catalog and Spark`, () => {
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
      expect(log.lifecycleViolations()).toEqual([]);

      // One Spark session per table, side by side: the queue is idle, nothing else runs.
      const truths = await Promise.all(
        keys.map((key) =>
          tableTruth(tableOf(key), {
            catalogUri: lake.catalogUri,
            properties: lake.properties,
            env: lake.s3?.keys,
          }),
        ),
      );
      for (const [i, key] of keys.entries()) {
        const was = before.get(key)!;
        const now = truths[i]!;
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
      await expectFilesWhereTheLakeIs();
      await expectKeysNowhere();
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

  it(
    'turns a Spark commit plus a commit event into a task in one trace, and runs it exactly once although the dispatcher is killed mid-run',
    async () => {
      const heavy = tableOf(FixtureKey.manySnapshots);
      const mor = tableOf(FixtureKey.morPositionDeletes);
      const sorted = tableOf(FixtureKey.sorted);
      // One Spark session commits to all three tables; only commit events tell Icepack.
      const snapshots = await appendFiles([heavy, mor, sorted]);
      for (const [table, id] of Object.entries(snapshots)) appended.set(table, id);
      const { header, traceId } = traceparent();
      const t0 = Date.now();
      await commitEvent(heavy, appendedTo(heavy), header);

      const started = await until(
        () => firstSince(heavy.name, ['merge'], 'started', t0),
        'the commit-triggered merge of snapshot_heavy to start',
        5 * MINUTE,
        describeSystem,
      );
      // Killed while its Spark run is under way: a new dispatcher must re-attach, not relaunch.
      const launch = await until(
        () => launchOf(started.runId),
        'the Spark run of the merge to be launched',
        2 * MINUTE,
        describeSystem,
      );
      await running.get('dispatcher')!.stop('SIGKILL');
      await start('dispatcher');
      const end = await until(
        () => endOf(started),
        'the merge to end after the dispatcher restart',
        8 * MINUTE,
        describeSystem,
      );
      expect(end.status, describeSystem()).toBe('succeeded');
      // One outcome and no retry: the restarted dispatcher followed the run it found.
      expect(
        runEvents(started)
          .filter((e) => RUN_STATUSES.includes(e.status))
          .map((e) => e.status),
      ).toEqual(['started', 'succeeded']);
      // Exactly one Spark run: the local runner records every launch in its run directory.
      const ofThisRun = (await launches()).filter((l) => l.runId === launch.runId);
      expect(ofThisRun.map((l) => l.attempt)).toEqual([1]);
      // And it committed once: one snapshot after the writer's, a rewrite.
      const history = await snapshotsOf(heavy);
      const commit = appendedTo(heavy);
      const after = history.slice(history.findIndex((s) => s.snapshotId === commit));
      expect(
        after.map((s) => s.operation),
        JSON.stringify(history),
      ).toEqual(['append', 'replace']);

      // One trace from the writer's commit event to the Spark job, each hop under the one
      // before: the commit event consumed, the scan request (its `scan table` span and the
      // table state it sends are siblings under it), the table state consumed, the task
      // enqueued, its dispatch. The job's own span is the child of the dispatch span of the
      // killed dispatcher, which was never exported: here it only has to be in the trace
      // (the next test checks its parent).
      const hops = [
        'metadata-scanner: process icepack.commits',
        'metadata-scanner: process icepack.scan-requests',
        'planner: process icepack.table-state',
        'planner: enqueue merge',
        'dispatcher: dispatch merge',
      ];
      const alsoInTrace = [
        'metadata-scanner: scan table',
        'dispatcher: send icepack.task-events',
        'spark-job: job merge',
      ];
      const seen = () => new Set(otlp.trace(traceId).map((s) => `${s.service}: ${s.name}`));
      // Spans are exported in batches a few seconds after they end.
      const complete = await until(
        () =>
          missingHop(traceId, hops) === undefined && alsoInTrace.every((hop) => seen().has(hop)),
        `every hop in trace ${traceId}`,
        MINUTE,
      ).catch(() => false);
      const eventTraces = runEvents(started).map(
        (e) => `${e.status} ${e.taskId}: trace ${String(log.traceIds[log.events.indexOf(e)])}`,
      );
      const otherSpans = otlp.spans
        .filter((s) => s.service === 'dispatcher' || s.service === 'spark-job')
        .map((s) => `${s.service}: ${s.name} ${s.traceId}`);
      expect(
        complete,
        `missing hop: ${String(missingHop(traceId, hops))}\nspans in trace ${traceId}:\n${spansOf(traceId)}\nevents of the run:\n${eventTraces.join('\n')}\ndispatcher and job spans:\n${otherSpans.slice(-20).join('\n')}`,
      ).toBe(true);
      expect(otlp.rejected).toEqual([]);
      expect(log.lifecycleViolations()).toEqual([]);
    },
    15 * MINUTE,
  );

  it(
    'loses no task through a short Kafka outage',
    async () => {
      const mor = tableOf(FixtureKey.morPositionDeletes);
      const t0 = Date.now();
      await commitEvent(mor, appendedTo(mor));
      await briefOutage('kafka.sh');
      // The commit event is consumed, scanned and planned once Kafka is back; its run starts.
      const started = await until(
        () => firstSince(mor.name, ['merge'], 'started', t0),
        'the merge of customers_mor to start after the Kafka outage',
        8 * MINUTE,
        describeSystem,
      );
      const end = await until(
        () => endOf(started),
        'that merge of customers_mor to end',
        8 * MINUTE,
        describeSystem,
      );
      expect(end.status, describeSystem()).toBe('succeeded');
      // It rewrote the files the writer added.
      expect(end.after!.dataFiles).toBeLessThan(end.before!.dataFiles);

      // The job's span is a child of the dispatch that ran it (this dispatcher was not killed,
      // so its span was exported).
      const traceId = log.traceIds[log.events.indexOf(started)];
      expect(traceId, 'trace id of the started event').toBeDefined();
      const isDispatch = (s: ReceivedSpan) =>
        s.service === 'dispatcher' && s.name === 'dispatch merge';
      const job = await until(
        () => {
          const spans = otlp.trace(traceId!);
          const j = spans.find((s) => s.service === 'spark-job' && s.name === 'job merge');
          return (
            j !== undefined && spans.some((s) => isDispatch(s) && s.spanId === j.parentSpanId) && j
          );
        },
        `the job span, child of a dispatch span, in trace ${String(traceId)}`,
        MINUTE,
        () => spansOf(traceId!),
      );
      expect(job.attributes['icepack.task.id']).toBe(started.taskId);
      // Up the trace from the job: dispatch, the enqueue, the table state it was planned from.
      expect(
        missingHop(traceId!, [
          'planner: process icepack.table-state',
          'planner: enqueue merge',
          'dispatcher: dispatch merge',
          'spark-job: job merge',
        ]),
        spansOf(traceId!),
      ).toBeUndefined();
      expect(log.lifecycleViolations()).toEqual([]);
    },
    12 * MINUTE,
  );

  it(
    'loses no task through a short Redis outage',
    async () => {
      const sorted = tableOf(FixtureKey.sorted);
      const t0 = Date.now();
      await commitEvent(sorted, appendedTo(sorted));
      // The rewrite is planned, so it lives in Redis when Redis goes away.
      const planned = await until(
        () => firstSince(sorted.name, ['sort', 'merge'], 'planned', t0),
        'a rewrite of sorted_events to be planned',
        3 * MINUTE,
        describeSystem,
      );
      await briefOutage('redis.sh');
      const end = await until(
        () => endOf(planned),
        'the planned rewrite of sorted_events to end after the Redis outage',
        10 * MINUTE,
        describeSystem,
      );
      expect(end.status, describeSystem()).toBe('succeeded');
      expect(end.after!.dataFiles).toBeLessThan(end.before!.dataFiles);
      expect(log.lifecycleViolations()).toEqual([]);
    },
    12 * MINUTE,
  );
});
