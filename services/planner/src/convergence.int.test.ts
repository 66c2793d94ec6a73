import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { computeTableState, RestCatalog } from '@icepack/iceberg';
import {
  createHttpServer,
  createLogger,
  deleteTopics,
  EnvelopeConsumer,
  EnvelopeProducer,
  ensureTopics,
  KafkaClient,
  type HttpServer,
} from '@icepack/runtime';
import { sparkSql } from '@icepack/test';
import {
  parseMessage,
  tableKey,
  TaskEventTypes,
  type TableId,
  type TableState,
  type TaskEvent,
} from '@icepack/types';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LastSucceededStore } from './adapters/last-succeeded.ts';
import { LedgerStore } from './adapters/ledger-store.ts';
import { Planner } from './adapters/planner.ts';
import { ReplanPass } from './adapters/replan-pass.ts';
import { TableStateStore } from './adapters/state-store.ts';
import { KafkaTaskEventSink } from './adapters/task-event-sink.ts';
import { taskOutcomeHandlers } from './adapters/task-outcome-handlers.ts';
import { TaskQueue } from './adapters/task-queue.ts';
import { plannerRouter } from './api/planner-router.ts';
import { tableStateHandlers } from './adapters/table-state-handlers.ts';
import { tableState } from './domain/state-fixtures.ts';
import { waitFor } from './testing/wait-for.ts';

// Convergence on real Kafka and Redis (and, for real tables, the REST catalog and Spark):
// a cleanup only when an expiry can remove something, no second task of a type within its
// minimum interval after a success (known from the `succeeded` events on Kafka), and a
// failed task planned again by the re-plan pass without a new table state. The same
// `succeeded` events fill the ledger that `GET /v1/ledger` serves, and a resident session's
// idle tail (`ResidentSessionEnded`, ADR 0046) adds its cost there once, as no task run.

const infra = inject('infra');
const logger = createLogger({
  service: 'planner-convergence-test',
  level: 'warn',
  destination: new Writable({ write: (_c, _e, cb) => cb() }),
});
const suffix = randomUUID().slice(0, 8);
const catalog = `cv-${suffix}`;
const stateTopic = `test.planner.${suffix}.cv-table-state`;
const eventsTopic = `test.planner.${suffix}.cv-task-events`;
const dlqTopic = `test.planner.${suffix}.cv-dlq`;
const groupId = `test-planner-cv-${suffix}`;

let redis: Redis;
let kafka: KafkaClient;
let producer: EnvelopeProducer;
let consumers: EnvelopeConsumer[] = [];
let queue: TaskQueue;
let states: TableStateStore;
let lastSucceeded: LastSucceededStore;
let ledger: LedgerStore;
let http: HttpServer;
const token = 'test-token-0123456789abcdef';
let planner: Planner;
const events: TaskEvent[] = [];
let stopReader: () => Promise<void>;

/** Publishes a state as the scanner does and resolves once the planner stored it (it acts first). */
async function publishState(state: TableState): Promise<void> {
  const key = tableKey(state.table);
  await producer.publish(stateTopic, 'TableScanned', key, state);
  await waitFor(`the planner to store ${key} at ${state.scannedAt}`, async () =>
    (await states.get(key))?.scannedAt === state.scannedAt ? true : undefined,
  );
}

/** The dispatcher's end of a task: the job is gone from the queue and the outcome is on Kafka. */
async function finishTask(
  table: TableId,
  taskType: 'cleanup' | 'merge' | 'sort',
  status: 'succeeded' | 'failed',
): Promise<string> {
  expect(await queue.removeWaiting(table, taskType)).toBe(true);
  const base = {
    taskId: `${taskType}/${tableKey(table)}`,
    table,
    taskType,
    at: new Date().toISOString(),
    attempt: 1,
    runId: `run-${randomUUID().slice(0, 8)}-a1`,
  };
  const key = tableKey(table);
  if (status === 'succeeded') {
    // The ledger entry, as the dispatcher fills it in.
    const cost = { runMs: 30_000, coreSecondsRequested: 60, coreSecondsUsed: 41.5 };
    const benefit = { dataFilesRemoved: 0, deleteFilesRemoved: 0, snapshotsRemoved: 48 };
    await producer.publish(eventsTopic, 'TaskSucceeded', key, {
      ...base,
      status,
      cost,
      benefit,
    });
  } else {
    const error = { kind: 'spark', message: 'job failed', retryable: false };
    await producer.publish(eventsTopic, 'TaskFailed', key, { ...base, status, error });
  }
  return base.runId;
}

const jobStates = async (table: TableId) => {
  const jobs = await queue.inspect(table);
  return { cleanup: jobs.cleanup.state, merge: jobs.merge.state, sort: jobs.sort.state };
};

const eventsOf = (table: TableId) =>
  events.filter((e) => tableKey(e.table) === tableKey(table)).map((e) => [e.status, e.taskId]);

beforeAll(async () => {
  redis = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
  kafka = new KafkaClient({ brokers: infra.kafkaBrokers, clientId: groupId, logger });
  await ensureTopics(kafka, [
    { name: stateTopic, cleanupPolicy: 'compact', partitions: 2 },
    { name: eventsTopic, cleanupPolicy: 'delete', partitions: 2 },
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
  lastSucceeded = new LastSucceededStore({ connection: redis, key: `test:${catalog}:succeeded` });
  ledger = new LedgerStore({ connection: redis, prefix: `test:${catalog}:ledger` });
  planner = new Planner({
    queue,
    states,
    lastSucceeded,
    events: new KafkaTaskEventSink(producer, eventsTopic),
    logger,
  });
  consumers = [
    new EnvelopeConsumer(kafka, {
      groupId,
      topics: [stateTopic],
      producer,
      dlqTopic,
      ...tableStateHandlers(planner),
    }),
    new EnvelopeConsumer(kafka, {
      groupId: `${groupId}-outcomes`,
      topics: [eventsTopic],
      producer,
      dlqTopic,
      handlers: taskOutcomeHandlers(lastSucceeded, ledger),
    }),
  ];
  http = createHttpServer({ port: 0, host: '127.0.0.1', logger });
  http.app.use(
    '/v1',
    plannerRouter({ planner, queue, token, catalogs: () => states.catalogs(), ledger }),
  );
  await http.listen();
  for (const c of consumers) await c.start();

  const reader = kafka.kafka.consumer({ groupId: `${groupId}-reader` });
  await reader.connect();
  await reader.subscribe({ topic: eventsTopic, fromBeginning: true });
  await reader.run({
    eachMessage: ({ message }) => {
      const envelope = parseMessage(message.value ?? '', [
        ...Object.values(TaskEventTypes),
        'ResidentSessionEnded',
      ]);
      if (envelope.type !== 'ResidentSessionEnded') events.push(envelope.payload as TaskEvent);
      return Promise.resolve();
    },
  });
  stopReader = () => reader.disconnect();
});

afterAll(async () => {
  await http?.close();
  for (const c of consumers) await c.stop();
  await stopReader?.();
  await producer.disconnect();
  await deleteTopics(kafka, [stateTopic, eventsTopic, dlqTopic]);
  const admin = kafka.kafka.admin();
  await admin.connect();
  await admin
    .deleteGroups([groupId, `${groupId}-outcomes`, `${groupId}-reader`])
    .catch(() => undefined);
  await admin.disconnect();
  await kafka.close();
  for (const c of [catalog, 'local']) await queue.queue(c).obliterate({ force: true });
  await queue.close();
  await states.clear();
  await lastSucceeded.clear();
  await ledger.clear(catalog);
  await redis.quit();
});

describe('min interval after a success (task outcomes from Kafka)', () => {
  it('a cleanup that succeeded is not planned again by a newer state or a re-plan', async () => {
    const table: TableId = { catalog, namespace: ['cv'], name: 'expired' };
    const key = tableKey(table);
    // 60 snapshots > 50, the oldest 12 days old: past the 5-day retention.
    const first = tableState({ snapshots: 60 }, { table, scannedAt: new Date().toISOString() });
    await publishState(first);
    expect((await jobStates(table)).cleanup).toBe('prioritized');

    await finishTask(table, 'cleanup', 'succeeded');
    await waitFor('the success to be recorded', async () =>
      (await lastSucceeded.get(key)).cleanup !== undefined ? true : undefined,
    );
    await expectInLedger(key);

    // A writer commits: a newer state that still has old snapshots (say a branch kept them
    // until now). Within the hour after the success, no second cleanup.
    const newer = tableState(
      { snapshots: 61 },
      { table, lastSequenceNumber: '43', scannedAt: new Date().toISOString() },
    );
    await publishState(newer);
    expect((await jobStates(table)).cleanup).toBe('missing');
    const explained = await planner.explain(key);
    const cleanup = explained?.decisions.find(
      (d) => (d as { type: string }).type === 'cleanup',
    ) as { notFired: string[] };
    expect(cleanup.notFired).toEqual([
      expect.stringMatching(
        /^the last cleanup succeeded \d+(ms|s) ago; the next waits until 1h have passed \(icepack\.cleanup\.min-interval\)$/,
      ),
    ]);

    // The re-plan pass does not bring it back either.
    const pass = new ReplanPass({
      planner,
      states,
      connection: redis,
      logger,
      lockKey: `test:${catalog}:replan-lock-1`,
    });
    const result = await pass.runOnce();
    expect(result?.tables).toBeGreaterThanOrEqual(1);
    expect((await jobStates(table)).cleanup).toBe('missing');
    expect(eventsOf(table)).toEqual([
      ['planned', `cleanup/${key}`],
      ['succeeded', `cleanup/${key}`],
    ]);
    await redis.del(`test:${catalog}:replan-lock-1`);
  });
});

/** GET /v1/ledger with the token; the parsed body. */
async function ledgerGet(query: string, auth = token) {
  const res = await fetch(`http://127.0.0.1:${String(http.port)}/v1/ledger?${query}`, {
    headers: { authorization: `Bearer ${auth}` },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The success just published on Kafka is in the ledger, per table and per catalog. */
async function expectInLedger(key: string): Promise<void> {
  const table = `catalog=${encodeURIComponent(catalog)}&table=${encodeURIComponent(key)}`;
  const found = await waitFor('the success in the ledger', async () => {
    const { status, body } = await ledgerGet(table);
    return status === 200 && (body.entries as unknown[]).length > 0 ? body : undefined;
  });
  expect(found).toMatchObject({
    catalog,
    table: key,
    totals: {
      runs: 1,
      byType: { cleanup: 1 },
      cost: { runMs: 30_000, coreSecondsRequested: 60, coreSecondsUsed: 41.5 },
      benefit: { snapshotsRemoved: 48 },
    },
    entries: [{ tableKey: key, taskId: `cleanup/${key}`, taskType: 'cleanup' }],
  });
  const perCatalog = await ledgerGet(`catalog=${encodeURIComponent(catalog)}`);
  expect(perCatalog.status).toBe(200);
  expect(perCatalog.body.tables).toEqual(
    expect.arrayContaining([expect.objectContaining({ tableKey: key, runs: 1 })]),
  );
  // A window that ends before the run: nothing.
  const before = await ledgerGet(
    `catalog=${encodeURIComponent(catalog)}&since=2020-01-01T00:00:00Z&until=2020-01-02T00:00:00Z`,
  );
  expect(before.body.totals).toMatchObject({ runs: 0 });
  // Behind the token; bad parameters are 400 naming the field.
  expect((await ledgerGet(table, 'wrong-token')).status).toBe(401);
  const bad = await ledgerGet(`catalog=${encodeURIComponent(catalog)}&since=yesterday`);
  expect(bad.status).toBe(400);
  expect(bad.body.fields).toEqual([expect.objectContaining({ path: 'since' })]);
  expect((await ledgerGet('table=x')).body.fields).toEqual([
    expect.objectContaining({ path: 'catalog' }),
  ]);
  expect((await ledgerGet('catalog=never-seen')).status).toBe(404);
}

describe("a resident session's idle tail (ADR 0046)", () => {
  it('is in the ledger once per session, as its leader table’s cost and no task run; not a success', async () => {
    const table: TableId = { catalog, namespace: ['cv'], name: 'resident' };
    const key = tableKey(table);
    await publishState(
      tableState({ snapshots: 60 }, { table, scannedAt: new Date().toISOString() }),
    );
    expect((await jobStates(table)).cleanup).toBe('prioritized');
    const runId = await finishTask(table, 'cleanup', 'succeeded');
    await waitFor('the success to be recorded', async () =>
      (await lastSucceeded.get(key)).cleanup !== undefined ? true : undefined,
    );
    const succeededAt = (await lastSucceeded.get(key)).cleanup;
    // A cleanup led a session that idled 30 s after its last task on 3 cores, then exited; a restarted
    // dispatcher reports that tail again (a later `at`), then another session's tail comes.
    const tail = (run: string, at: number, idleMs: number) => ({
      taskId: `cleanup/${key}`,
      table,
      taskType: 'cleanup' as const,
      runId: run,
      at: new Date(at).toISOString(),
      idleMs,
      cost: { runMs: idleMs, coreSecondsRequested: (3 * idleMs) / 1000 },
    });
    const now = Date.now();
    await producer.publish(eventsTopic, 'ResidentSessionEnded', key, tail(runId, now, 30_000));
    await producer.publish(
      eventsTopic,
      'ResidentSessionEnded',
      key,
      tail(runId, now + 5_000, 30_000),
    );
    await producer.publish(
      eventsTopic,
      'ResidentSessionEnded',
      key,
      tail('run-next-a1', now + 9_000, 10_000),
    );
    const query = `catalog=${encodeURIComponent(catalog)}&table=${encodeURIComponent(key)}&until=${encodeURIComponent(new Date(now + 60_000).toISOString())}`;
    const found = await waitFor('both sessions in the ledger', async () => {
      const { body } = await ledgerGet(query);
      const entries = body.entries as { runId: string }[];
      return entries.some((e) => e.runId === 'run-next-a1') ? body : undefined;
    });
    expect(found.totals).toMatchObject({
      runs: 1,
      byType: { cleanup: 1 },
      sessionTails: 2,
      sessionTailCoreSeconds: 120,
      cost: { runMs: 30_000 + 40_000, coreSecondsRequested: 60 + 90 + 30 },
      runsWithoutCost: 0,
    });
    expect(found.entries).toEqual([
      expect.objectContaining({ kind: 'session-tail', runId: 'run-next-a1' }),
      expect.objectContaining({ kind: 'session-tail', runId, at: new Date(now).toISOString() }),
      expect.not.objectContaining({ kind: 'session-tail' }),
    ]);
    const perCatalog = await ledgerGet(
      `catalog=${encodeURIComponent(catalog)}&until=${encodeURIComponent(new Date(now + 60_000).toISOString())}`,
    );
    expect(perCatalog.body.tables).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ tableKey: key, runs: 1, sessionTails: 2 }),
      ]),
    );
    // Not a success: the cleanup's last success is the run's, and nothing is planned from it.
    expect((await lastSucceeded.get(key)).cleanup).toBe(succeededAt);
    expect((await jobStates(table)).cleanup).toBe('missing');
  });
});

describe('the re-plan pass and the back-off after a failure', () => {
  it('a failed task comes back only after its back-off; a cleanup of the table is planned meanwhile', async () => {
    const table: TableId = { catalog, namespace: ['cv'], name: 'failing' };
    const key = tableKey(table);
    await publishState(
      tableState(
        { smallFiles: 80, newDataFiles: 5 },
        { table, scannedAt: new Date().toISOString() },
      ),
    );
    expect((await jobStates(table)).merge).toBe('prioritized');
    await finishTask(table, 'merge', 'failed');
    expect((await jobStates(table)).merge).toBe('missing');
    // The outcomes consumer records the failure from the event (BullMQ keeps no failed job).
    const streak = await waitFor(
      'the failure to be recorded',
      async () => (await lastSucceeded.failures(key)).merge,
    );
    expect(streak).toMatchObject({ count: 1, kind: 'spark' });
    const failedAt = Date.parse(streak.lastFailedAt);

    // A writer commits: the newer state needs the merge and now a cleanup too. The merge is
    // held back by its back-off (5 min after one failure); the cleanup is not.
    await publishState(
      tableState(
        { smallFiles: 90, newDataFiles: 6, snapshots: 60 },
        { table, lastSequenceNumber: '43', scannedAt: new Date().toISOString() },
      ),
    );
    expect(await jobStates(table)).toMatchObject({ merge: 'missing', cleanup: 'prioritized' });
    const explained = await planner.explain(key);
    const merge = explained?.decisions.find((d) => (d as { type: string }).type === 'merge') as {
      action: string;
      notFired: string[];
    };
    const nextTry = new Date(failedAt + 5 * 60_000).toISOString();
    expect(merge).toMatchObject({
      action: 'none',
      notFired: [
        `the last run failed (spark); next try after ${nextTry} (back-off 5m for this merge, icepack.failure-backoff)`,
      ],
    });

    // Re-plan passes of a planner whose clock is driven: just before the back-off has passed,
    // nothing; once it has, the merge comes back, once.
    let now = failedAt + 5 * 60_000 - 1;
    const clocked = new Planner({
      queue,
      states,
      lastSucceeded,
      events: new KafkaTaskEventSink(producer, eventsTopic),
      logger,
      clock: () => new Date(now),
    });
    const lockKey = `test:${catalog}:replan-lock-2`;
    const pass = () =>
      new ReplanPass({
        planner: clocked,
        states,
        connection: redis,
        logger,
        lockKey,
        batchSize: 1,
      });
    expect((await pass().runOnce())?.tables).toBeGreaterThanOrEqual(1);
    await redis.del(lockKey);
    expect((await jobStates(table)).merge).toBe('missing');

    now = failedAt + 5 * 60_000;
    // Replicas race for the pass: one runs it.
    const results = await Promise.all([pass().runOnce(), pass().runOnce()]);
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    expect((await jobStates(table)).merge).toBe('prioritized');

    // A second pass finds the task waiting: nothing more.
    await redis.del(lockKey);
    await pass().runOnce();
    await redis.del(lockKey);
    await waitFor('the events', () =>
      Promise.resolve(eventsOf(table).length >= 4 ? true : undefined),
    );
    expect(eventsOf(table)).toEqual([
      ['planned', `merge/${key}`],
      ['failed', `merge/${key}`],
      ['planned', `cleanup/${key}`],
      ['planned', `merge/${key}`],
    ]);
    expect(events.filter((e) => tableKey(e.table) === key).at(-1)?.reason).toBe(
      're-planned: 90 small files > 20',
    );
  });

  it('a success ends the failure streak; a redelivered failure is counted once', async () => {
    const table: TableId = { catalog, namespace: ['cv'], name: 'recovering' };
    const key = tableKey(table);
    const failed = (at: string) => ({
      taskId: `merge/${key}`,
      table,
      taskType: 'merge' as const,
      status: 'failed' as const,
      at,
      error: { kind: 'commit-conflict', message: 'conflict', retryable: false },
    });
    // A success of `type` at `at`, and the wait until it is recorded: events of one table share
    // a partition, so every event published before it has been handled too.
    const succeeded = async (type: 'cleanup' | 'merge' | 'sort', at: string) => {
      const payload = {
        taskId: `${type}/${key}`,
        table,
        taskType: type,
        status: 'succeeded' as const,
        at,
      };
      await producer.publish(eventsTopic, 'TaskSucceeded', key, payload);
      await waitFor(`the ${type} success at ${at}`, async () =>
        (await lastSucceeded.get(key))[type] === at ? true : undefined,
      );
    };
    // The second failure twice: events are at least once.
    for (const at of [
      '2026-12-01T10:00:00.000Z',
      '2026-12-01T11:00:00.000Z',
      '2026-12-01T11:00:00.000Z',
    ])
      await producer.publish(eventsTopic, 'TaskFailed', key, failed(at));
    await succeeded('cleanup', '2026-12-01T11:30:00.000Z'); // another type: the streak stays
    expect(await lastSucceeded.failures(key)).toEqual({
      merge: { count: 2, lastFailedAt: '2026-12-01T11:00:00.000Z', kind: 'commit-conflict' },
    });
    // What the planner reads per state: both records in one pipeline.
    expect(await lastSucceeded.outcomes(key)).toEqual({
      succeeded: { cleanup: '2026-12-01T11:30:00.000Z' },
      failures: {
        merge: { count: 2, lastFailedAt: '2026-12-01T11:00:00.000Z', kind: 'commit-conflict' },
      },
    });
    await succeeded('merge', '2026-12-01T12:00:00.000Z');
    expect(await lastSucceeded.failures(key)).toEqual({});
    // A failure older than the success (delivered late) does not start a new streak.
    await producer.publish(eventsTopic, 'TaskFailed', key, failed('2026-12-01T11:45:00.000Z'));
    await succeeded('sort', '2026-12-01T12:30:00.000Z');
    expect(await lastSucceeded.failures(key)).toEqual({});
  });
});

describe('real tables (REST catalog, Spark)', () => {
  const ns = `cv_${suffix.replaceAll('-', '')}`;
  const rest = new RestCatalog({ name: 'local', uri: infra.catalogUri });
  const id = (name: string): TableId => ({ catalog: 'local', namespace: [ns], name });
  const sql = (name: string) => `local.${ns}.${name}`;
  const inserts = (name: string) =>
    Array.from({ length: 7 }, (_, i) => `INSERT INTO ${sql(name)} VALUES (${i}, 'row ${i}')`);
  const create = (name: string, props: Record<string, string>) =>
    `CREATE TABLE ${sql(name)} (id BIGINT, v STRING) USING iceberg TBLPROPERTIES (${Object.entries({
      'format-version': '2',
      'icepack.snapshot-threshold': '5',
      ...props,
    })
      .map(([k, v]) => `'${k}'='${v}'`)
      .join(', ')})`;

  async function scan(name: string): Promise<TableState> {
    const outcome = await rest.loadTable(id(name));
    if (outcome.status !== 'loaded') throw new Error('expected a loaded table');
    return computeTableState(outcome.table);
  }

  beforeAll(async () => {
    await sparkSql(infra, 'local', [
      `CREATE NAMESPACE IF NOT EXISTS local.${ns}`,
      create('young', {}),
      ...inserts('young'),
      // A retention of 1 ms: every snapshot but the last is past it.
      create('aged', {
        'icepack.history.expire.max-snapshot-age-ms': '1',
        'icepack.history.expire.min-snapshots-to-keep': '6',
      }),
      ...inserts('aged'),
      create('nogc', { 'icepack.history.expire.max-snapshot-age-ms': '1', 'gc.enabled': 'false' }),
      ...inserts('nogc'),
    ]);
  }, 600_000);

  afterAll(async () => {
    for (const name of ['young', 'aged', 'nogc']) {
      await fetch(`${infra.catalogUri}/v1/namespaces/${ns}/tables/${name}?purgeRequested=true`, {
        method: 'DELETE',
      });
    }
    await fetch(`${infra.catalogUri}/v1/namespaces/${ns}`, { method: 'DELETE' });
  });

  it('no cleanup for 7 snapshots > 5 that are all inside the retention', async () => {
    const state = await scan('young');
    expect(state.snapshots.total).toBe(7);
    expect(state.snapshots.expiry).toMatchObject({ mainOnly: 7, unreferenced: 0 });
    await publishState(state);
    expect((await jobStates(id('young'))).cleanup).toBe('missing');
    // The re-plan pass agrees.
    const lockKey = `test:${catalog}:replan-lock-3`;
    await new ReplanPass({ planner, states, connection: redis, logger, lockKey }).runOnce();
    await redis.del(lockKey);
    expect((await jobStates(id('young'))).cleanup).toBe('missing');
    expect(eventsOf(id('young'))).toEqual([]);
  });

  it('a cleanup once snapshots are past the retention; none with gc.enabled=false, said once', async () => {
    await publishState(await scan('aged'));
    expect((await jobStates(id('aged'))).cleanup).toBe('prioritized');

    const nogc = await scan('nogc');
    await publishState(nogc);
    // A later scan of the same table says nothing more.
    await publishState({ ...nogc, scannedAt: new Date().toISOString() });
    expect((await jobStates(id('nogc'))).cleanup).toBe('missing');
    await waitFor('the skipped event', () =>
      Promise.resolve(eventsOf(id('nogc')).length > 0 ? true : undefined),
    );
    const skipped = events.filter((e) => tableKey(e.table) === tableKey(id('nogc')));
    expect(skipped.map((e) => [e.status, e.taskId])).toEqual([
      ['skipped', `cleanup/${tableKey(id('nogc'))}`],
    ]);
    expect(skipped[0]?.reason).toMatch(
      /^gc\.enabled=false on the table: Iceberg refuses to expire its snapshots, so no cleanup runs \(it would: 7 snapshots > 5, /,
    );
  });

  it('after the cleanup succeeded (a real expiry) and a writer committed, no second cleanup', async () => {
    // The dispatcher's part: the expiry as the Spark job runs it, then its outcome on Kafka.
    // A writer commits meanwhile, so 7 snapshots > 5 again, the oldest past the retention.
    const olderThan = new Date().toISOString().replace('T', ' ').replace('Z', '');
    await sparkSql(infra, 'local', [
      `CALL local.system.expire_snapshots(table => '${ns}.aged', older_than => TIMESTAMP '${olderThan}', retain_last => 6)`,
      `INSERT INTO ${sql('aged')} VALUES (100, 'after the expiry')`,
    ]);
    await finishTask(id('aged'), 'cleanup', 'succeeded');
    await waitFor('the success to be recorded', async () =>
      (await lastSucceeded.get(tableKey(id('aged')))).cleanup !== undefined ? true : undefined,
    );
    const after = await scan('aged');
    expect(after.snapshots.total).toBe(7); // 6 kept + the writer's
    expect(after.snapshots.expiry).toMatchObject({ mainOnly: 7, unreferenced: 0 });
    await publishState(after);
    expect((await jobStates(id('aged'))).cleanup).toBe('missing');
    const lockKey = `test:${catalog}:replan-lock-4`;
    await new ReplanPass({ planner, states, connection: redis, logger, lockKey }).runOnce();
    await redis.del(lockKey);
    expect((await jobStates(id('aged'))).cleanup).toBe('missing');
    expect(eventsOf(id('aged'))).toEqual([
      ['planned', `cleanup/${tableKey(id('aged'))}`],
      ['succeeded', `cleanup/${tableKey(id('aged'))}`],
    ]);
  }, 600_000);
});
