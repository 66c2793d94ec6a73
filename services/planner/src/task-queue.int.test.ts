import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { createLogger } from '@icepack/runtime';
import {
  createEnvelope,
  MessageType,
  parseMessage,
  queueNameForCatalog,
  sampleTableId,
  serializeEnvelope,
  tableKey,
  type TableId,
  type TableState,
  type Task,
  type TaskType,
} from '@icepack/types';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { LastSucceededStore } from './adapters/last-succeeded.ts';
import { Planner } from './adapters/planner.ts';
import { PLANNER_REDIS_OPTIONS } from './adapters/redis-options.ts';
import { TableStateStore } from './adapters/state-store.ts';
import { ScriptedTableReads, separateReads } from './adapters/table-reads.ts';
import { InMemoryTaskEventSink } from './adapters/task-event-sink.ts';
import { TaskQueue } from './adapters/task-queue.ts';
import { planTable } from './domain/plan.ts';
import { resolvePolicy } from '@icepack/policy';
import {
  DEFAULT_SCORE_OPTIONS,
  OVERDUE_PRIORITY,
  withAging,
  type ScoreOptions,
} from './domain/score.ts';
import {
  dayPartition,
  partitionedTableState,
  tableState,
  type StateFigures,
} from './domain/state-fixtures.ts';

const infra = inject('infra');
const logger = createLogger({
  service: 'planner-int-test',
  level: 'warn',
  destination: new Writable({ write: (_c, _e, cb) => cb() }),
});

// The planner's connections as main.ts makes them (auto-pipelining, issue 17 point 6; BullMQ's
// queue objects on their own): every guarantee below holds on them. BullMQ workers get
// connections of their own, as in the dispatcher.
let redis: Redis;
let queueRedis: Redis;
beforeAll(async () => {
  redis = new Redis(infra.redisUrl, { maxRetriesPerRequest: null, ...PLANNER_REDIS_OPTIONS });
  queueRedis = new Redis(infra.redisUrl, { maxRetriesPerRequest: null, ...PLANNER_REDIS_OPTIONS });
  await Promise.all([redis.ping(), queueRedis.ping()]);
});
afterAll(async () => {
  await Promise.all([redis.quit(), queueRedis.quit()]);
});

/** Everything a test created, removed afterwards. */
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
  cleanup.length = 0;
});

/** A unique catalog per test: its own queue, states and catalogs keys. */
function setup(scoreOptions: ScoreOptions = DEFAULT_SCORE_OPTIONS) {
  const catalog = `t-${randomUUID().slice(0, 8)}`;
  const queue = new TaskQueue({ connection: redis, queueConnection: queueRedis });
  const states = new TableStateStore({
    connection: redis,
    statesKey: `test:${catalog}:states`,
    catalogsKey: `test:${catalog}:catalogs`,
  });
  const events = new InMemoryTaskEventSink();
  // As main.ts makes it: the table read in one script (issue 17 point 6).
  const lastSucceeded = new LastSucceededStore({ connection: redis, key: `test:${catalog}:ok` });
  const reads = new ScriptedTableReads({ connection: redis, states, queue, lastSucceeded });
  const planner = new Planner({
    queue,
    states,
    events,
    logger,
    scoreOptions,
    lastSucceeded,
    reads,
  });
  cleanup.push(async () => {
    await queue.queue(catalog).obliterate({ force: true });
    await queue.close();
    await states.clear();
    await lastSucceeded.clear();
  });
  const table = (name = 'orders') => sampleTableId({ catalog, name });
  const state = (figures: StateFigures, overrides: Partial<TableState> = {}, name = 'orders') =>
    tableState(figures, { table: table(name), ...overrides });
  return { catalog, queue, states, events, planner, table, state, lastSucceeded, reads };
}

/** A task of `type` planned from `state` with a given priority (for ordering tests). */
function task(state: TableState, type: TaskType, priority: number): Task {
  const { policy } = resolvePolicy({});
  const plan = planTable({ state, policy, pending: {}, now: new Date() });
  const decided = plan.decisions.find((d) => d.type === type)?.task;
  if (decided === undefined) throw new Error(`state does not plan a ${type}`);
  return { ...decided, score: { ...decided.score, priority } };
}

const everything: StateFigures = {
  snapshots: 60,
  smallFiles: 80,
  newDataFiles: 5,
  newDataShare: 0.1,
};

/** Pulls every job with a real BullMQ worker (concurrency 1) and returns their ids in run order. */
async function runOrder(catalog: string, count: number): Promise<string[]> {
  const order: string[] = [];
  const connection = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
  const worker = new Worker(
    queueNameForCatalog(catalog),
    (job) => {
      order.push(job.id ?? '');
      return Promise.resolve();
    },
    { connection, prefix: 'icepack', concurrency: 1, autorun: false },
  );
  void worker.run();
  const deadline = Date.now() + 30_000;
  while (order.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  await worker.close();
  await connection.quit();
  return order;
}

describe('TaskQueue on real Redis (BullMQ 6)', () => {
  it('runs tasks by priority, then by creation time', async () => {
    const { catalog, queue, state } = setup();
    const added: [string, number][] = [
      ['a', 500],
      ['b', 100],
      ['c', 500],
      ['d', 100],
      ['e', 900],
      ['f', 500],
    ];
    for (const [name, priority] of added)
      await queue.create(task(state(everything, {}, name), 'merge', priority));
    const order = await runOrder(catalog, added.length);
    expect(order.map((id) => id.split('/').at(-1))).toEqual(['b', 'd', 'a', 'c', 'f', 'e']);
  });

  it('an update changes data and priority in place and keeps the place among equals', async () => {
    const { catalog, queue, state } = setup();
    const a = task(state(everything, {}, 'a'), 'merge', 300);
    const b = task(state(everything, {}, 'b'), 'merge', 300);
    const c = task(state(everything, {}, 'c'), 'merge', 300);
    for (const t of [a, b, c]) await queue.create(t);
    // a gets new data at the same priority: it stays first. c moves ahead of everyone.
    expect(
      await queue.update({ ...a, state: { ...a.state, metadataLocation: 's3://new.json' } }),
    ).toBe('updated');
    expect(await queue.update({ ...c, score: { ...c.score, priority: 200 } })).toBe('updated');
    const waiting = await queue.waiting(catalog);
    expect(waiting.map((w) => [w.task.table.name, w.priority])).toEqual([
      ['c', 200],
      ['a', 300],
      ['b', 300],
    ]);
    expect(waiting[1]?.task.state.metadataLocation).toBe('s3://new.json');
    expect(await runOrder(catalog, 3)).toEqual([c.id, a.id, b.id]);
  });

  it('aging lets an old low-priority task overtake a newer high-priority one', async () => {
    // One aging step per 200 ms worth 2000 points: a short configured wait.
    const options = { ...DEFAULT_SCORE_OPTIONS, agingStepMs: 200, agingStepPoints: 2000 };
    const { catalog, queue, state } = setup(options);
    // Real scores: a cleanup starts well below a merge.
    const natural = (s: TableState, type: TaskType) => {
      const t = task(s, type, 1);
      return { ...t, score: withAging(t.score, 0, options) };
    };
    const old = natural(state(everything, {}, 'old'), 'cleanup');
    await queue.create(old);
    await new Promise((r) => setTimeout(r, 450));
    const fresh = natural(state(everything, {}, 'fresh'), 'merge');
    await queue.create({ ...fresh, createdAt: new Date().toISOString() });
    expect(fresh.score.priority).toBeLessThan(old.score.priority);

    // Before the pass: the fresh merge runs first.
    expect((await queue.waiting(catalog)).map((w) => w.task.id)).toEqual([fresh.id, old.id]);
    const raised = await queue.age(catalog, new Date(), options);
    expect(raised).toBeGreaterThanOrEqual(1);
    const waiting = await queue.waiting(catalog);
    expect(waiting.map((w) => w.task.id)).toEqual([old.id, fresh.id]);
    expect(
      waiting[0]?.task.score.parts.find((p) => p.factor === 'waiting')?.points,
    ).toBeGreaterThanOrEqual(4000);
    expect(await runOrder(catalog, 2)).toEqual([old.id, fresh.id]);
  });

  it('never updates or removes a running task', async () => {
    const { catalog, queue, state } = setup();
    const merge = task(state(everything), 'merge', 10);
    await queue.create(merge);
    let release = () => {};
    const started = new Promise<void>((startedResolve) => {
      const connection = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
      const worker = new Worker(
        queueNameForCatalog(catalog),
        () => {
          startedResolve();
          return new Promise<void>((r) => (release = r));
        },
        { connection, prefix: 'icepack', concurrency: 1 },
      );
      cleanup.push(async () => {
        release();
        await worker.close();
        await connection.quit();
      });
    });
    await started;
    expect((await queue.inspect(merge.table)).merge.state).toBe('active');
    expect(await queue.update({ ...merge, score: { ...merge.score, priority: 1 } })).toBe(
      'not-waiting',
    );
    expect(await queue.removeWaiting(merge.table, 'merge')).toBe(false);
    expect(await queue.create(merge, 'active')).toBe(false);
  });
});

describe('Planner on real Redis', () => {
  it('duplicate and out-of-order states create one task; a newer state updates it', async () => {
    const { catalog, queue, planner, events, state } = setup();
    const s42 = state(
      { smallFiles: 80, newDataFiles: 5 },
      { lastSequenceNumber: '42', scannedAt: '2026-01-01T12:00:00.000Z' },
    );
    const s41 = {
      ...s42,
      lastSequenceNumber: '41',
      metadataLocation: 's3://old.json',
      scannedAt: '2026-01-01T11:00:00.000Z',
    };
    const s43 = {
      ...s42,
      lastSequenceNumber: '43',
      metadataLocation: 's3://new.json',
      scannedAt: '2026-01-01T13:00:00.000Z',
      files: { ...s42.files, smallFiles: 200 },
    };

    expect((await planner.handleState(s42)).actions).toEqual([
      { type: 'merge', action: 'planned' },
    ]);
    expect(await planner.handleState(s42)).toEqual({ ignored: 'duplicate', actions: [] });
    expect(await planner.handleState({ ...s42 })).toEqual({ ignored: 'duplicate', actions: [] });
    expect(await planner.handleState(s41)).toEqual({ ignored: 'older', actions: [] });
    let waiting = await queue.waiting(catalog);
    expect(waiting).toHaveLength(1);
    const before = waiting[0]!;

    expect((await planner.handleState(s43)).actions).toEqual([
      { type: 'merge', action: 'updated' },
    ]);
    expect(await planner.handleState(s42)).toEqual({ ignored: 'older', actions: [] });
    waiting = await queue.waiting(catalog);
    expect(waiting).toHaveLength(1);
    expect(waiting[0]?.task.state.metadataLocation).toBe('s3://new.json');
    expect(waiting[0]?.task.createdAt).toBe(before.task.createdAt);
    expect(waiting[0]!.priority).toBeLessThan(before.priority); // more small files, higher score
    expect(events.events.map((e) => [e.status, e.taskType])).toEqual([
      ['planned', 'merge'],
      ['updated', 'merge'],
    ]);
    expect(events.events[0]?.factors).toEqual([
      { factor: 'small-files', value: 80, threshold: 20, points: 200 },
    ]);
  });

  it('sends the commands of states in flight together: few socket writes per state', async () => {
    const { queue, planner, state, events } = setup();
    const tables = Array.from({ length: 32 }, (_, i) => `t${i}`);
    // Settle the connection first (scripts loaded, queue objects made), then count the writes
    // of 32 states handled 16 at a time, as the Kafka consumer hands them over.
    await planner.handleState(state(everything, {}, 'warm-up'));
    // Both connections' writes (the planner's own commands, and BullMQ's adds).
    type Socket = { write: (...a: unknown[]) => boolean };
    const sockets = [redis, queueRedis].map((r) => (r as unknown as { stream: Socket }).stream);
    const writes = sockets.map((socket) => socket.write);
    let count = 0;
    sockets.forEach((socket, i) => {
      socket.write = (...args: unknown[]) => {
        count++;
        return writes[i]!.apply(socket, args);
      };
    });
    try {
      const pending = [...tables];
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          for (let t = pending.shift(); t !== undefined; t = pending.shift())
            await planner.handleState(state(everything, {}, t));
        }),
      );
    } finally {
      sockets.forEach((socket, i) => (socket.write = writes[i]!));
    }
    // One write per command would be 7–9 per state (reads, BullMQ adds, the state put).
    expect(count).toBeLessThan(2 * tables.length);
    // And nothing was lost by sending them together: every table got its tasks, once.
    const planned = events.events.filter((e) => e.status === 'planned');
    expect(new Set(planned.map((e) => e.taskId)).size).toBe(planned.length);
    for (const name of tables)
      expect(planned.filter((e) => e.table.name === name).length).toBeGreaterThan(0);
    const waiting = await queue.waiting(state(everything).table.catalog);
    expect(waiting.length).toBe(planned.length);
  });

  it("keeps BullMQ's scripts on the queue connection: the planner's own batches carry none", async () => {
    const { queue, planner, state, catalog } = setup();
    await planner.handleState(state(everything));
    expect((await queue.waiting(catalog)).length).toBeGreaterThan(0);
    // ioredis copies a connection's defined scripts into every pipeline it builds (each
    // auto-pipelined batch): BullMQ defined its own on the queue connection only.
    const defined = (r: Redis) => Object.keys((r as unknown as { scriptsSet: object }).scriptsSet);
    expect(defined(queueRedis).length).toBeGreaterThan(10);
    expect(defined(redis)).toEqual([]);
  });

  it('replays a state whose handling crashed before it was stored, without a second task', async () => {
    const { catalog, queue, planner, states, state } = setup();
    const s = state({ snapshots: 60 });
    await planner.handleState(s);
    await states.delete(`${catalog}/sales/orders`); // as if the process died before storing it
    await planner.handleState(s);
    expect(await queue.waiting(catalog)).toHaveLength(1);
  });

  it('orders states against the stored head, or a whole state stored before heads were', async () => {
    const { catalog, planner, states, table } = setup();
    const s = {
      ...partitionedTableState([dayPartition('2026-01-09', 1), dayPartition('2026-01-08', 2)]),
      table: table(),
      lastSequenceNumber: '42',
    };
    const key = `${catalog}/sales/orders`;
    expect((await planner.handleState(s)).actions.length).toBeGreaterThan(0);
    const { partitions, ...head } = s;
    expect(partitions).toHaveLength(2);
    expect(await states.head(key)).toEqual(head);
    expect(await states.get(key)).toEqual(s); // the re-plan pass and the API read it whole
    expect(await states.getValidated(key)).toEqual(s);
    // Stored with its partitions packed (keys once, a row per partition), and smaller for it.
    const raw = (await redis.hget(`test:${catalog}:states`, key))!;
    expect(JSON.parse(raw)).toMatchObject({
      packedPartitions: {
        keys: expect.arrayContaining(['specId', 'partition', 'smallFiles']) as unknown,
        rows: [expect.any(Array), expect.any(Array)],
      },
    });
    expect(JSON.parse(raw)).not.toHaveProperty('partitions');
    expect(raw.length).toBeLessThan(JSON.stringify(s).length);
    // As a planner before packing stored it: the partitions as a list.
    await redis.hset(`test:${catalog}:states`, key, JSON.stringify(s));
    expect(await states.get(key)).toEqual(s);
    expect(await states.getValidated(key)).toEqual(s);
    expect((await states.page('0', 100)).states).toEqual([s]);
    const older = { ...s, lastSequenceNumber: '41' };
    expect(await planner.handleState(older)).toEqual({ ignored: 'older', actions: [] });

    // As a planner before heads stored it: the whole state only.
    await redis.hdel(`test:${catalog}:states:heads`, key);
    expect(await states.head(key)).toEqual(s);
    expect(await planner.handleState(s)).toEqual({ ignored: 'duplicate', actions: [] });
    expect(await planner.handleState(older)).toEqual({ ignored: 'older', actions: [] });

    await states.put(s);
    await states.delete(key);
    expect(await states.head(key)).toBeUndefined();
    expect(await redis.hlen(`test:${catalog}:states:heads`)).toBe(0);
  });

  it('plans a state sent as TableScanned version 2 as version 1, and stores the packed list it was sent (ADR 0050)', async () => {
    const one = setup();
    const two = setup();
    const three = setup();
    const s = (t: TableId) => ({
      ...partitionedTableState([
        dayPartition('2026-01-09', 1),
        { ...dayPartition('2026-01-08', 2), deleteFiles: 1, deleteFileBytes: 5 },
      ]),
      // Not ASCII: the list is found in the message's bytes by bytes.
      properties: { comment: 'Zürich ☕' },
      table: t,
    });
    const parsed = (
      state: TableState,
      version: number,
      edit = (t: string) => t,
      asBytes = false,
    ) => {
      const text = edit(
        serializeEnvelope(
          createEnvelope(MessageType.TableScanned, tableKey(state.table), state, { version }),
        ),
      );
      return parseMessage(asBytes ? Buffer.from(text) : text).payload as TableState;
    };
    const a = s(one.table());
    const b = s(two.table());
    const c = s(three.table());
    // A number the scanner would write otherwise: kept as sent shows the bytes were stored.
    const edit = (text: string) => {
      const edited = text.replace(/,5,"/, ',5e0,"');
      expect(edited).not.toBe(text);
      return edited;
    };
    const outcomeOne = await one.planner.handleState(parsed(a, 1));
    const outcomeTwo = await two.planner.handleState(parsed(b, 2, edit));
    // As the consumer reads it from Kafka: bytes (the list is sent to Redis as those bytes).
    const outcomeThree = await three.planner.handleState(parsed(c, 2, edit, true));
    expect(outcomeTwo).toEqual(outcomeOne);
    expect(outcomeThree).toEqual(outcomeOne);
    expect(outcomeTwo.actions.length).toBeGreaterThan(0);
    const stored = async (x: typeof one, t: TableState) =>
      (await redis.hget(`test:${x.catalog}:states`, tableKey(t.table)))!;
    const rawOne = await stored(one, a);
    const rawTwo = await stored(two, b);
    const rawThree = await stored(three, c);
    expect(rawTwo).toContain(',5e0,"');
    expect(rawTwo.replace(',5e0,"', ',5,"').replaceAll(two.catalog, one.catalog)).toBe(rawOne);
    expect(rawThree.replaceAll(three.catalog, two.catalog)).toBe(rawTwo);
    for (const [x, t] of [
      [two, b],
      [three, c],
    ] as const) {
      expect(await x.states.get(tableKey(t.table))).toEqual(t);
      expect(await x.states.getValidated(tableKey(t.table))).toEqual(t);
    }
  });

  it('a sort replaces a waiting merge (superseded event)', async () => {
    const { catalog, queue, planner, events, state } = setup();
    await planner.handleState(
      state({ smallFiles: 80, newDataFiles: 5, newDataShare: 0.1 }, { lastSequenceNumber: '1' }),
    );
    await planner.handleState(
      state({ smallFiles: 90, newDataFiles: 60, newDataShare: 0.6 }, { lastSequenceNumber: '2' }),
    );
    const waiting = await queue.waiting(catalog);
    expect(waiting.map((w) => w.task.type)).toEqual(['sort']);
    expect(events.events.map((e) => [e.status, e.taskType])).toEqual([
      ['planned', 'merge'],
      ['superseded', 'merge'],
      ['planned', 'sort'],
    ]);
  });

  it('removes waiting tasks when the table is paused or dropped, and says why', async () => {
    const { catalog, queue, planner, events, state, table } = setup();
    await planner.handleState(state({ snapshots: 60 }, { lastSequenceNumber: '1' }));
    await planner.handleState(
      state({ smallFiles: 80, newDataFiles: 5 }, { lastSequenceNumber: '1' }, 'other'),
    );
    await planner.handleState(
      state(
        { snapshots: 60 },
        { lastSequenceNumber: '2', properties: { 'icepack.enabled': 'false' } },
      ),
    );
    expect((await queue.waiting(catalog)).map((w) => w.task.table.name)).toEqual(['other']);
    expect(events.events.at(-1)).toMatchObject({
      status: 'skipped',
      taskType: 'cleanup',
      reason: 'paused: icepack.enabled=false on the table; no new tasks',
    });

    await planner.handleDropped(`${catalog}/sales/other`);
    expect(await queue.waiting(catalog)).toEqual([]);
    expect(events.events.at(-1)).toMatchObject({
      status: 'skipped',
      table: table('other'),
      reason: 'the table was dropped',
    });
    expect(await planner.explain(`${catalog}/sales/other`)).toBeUndefined();
  });

  it('reports a bad property value once, as a skipped event naming key and value', async () => {
    const { planner, events, state } = setup();
    const properties = { 'icepack.snapshot-threshold': 'lots' };
    await planner.handleState(state({ snapshots: 60 }, { lastSequenceNumber: '1', properties }));
    await planner.handleState(state({ snapshots: 61 }, { lastSequenceNumber: '2', properties }));
    const skipped = events.events.filter((e) => e.status === 'skipped');
    expect(skipped).toHaveLength(1);
    expect(skipped[0]?.reason).toContain('icepack.snapshot-threshold="lots"');
    expect(skipped[0]?.reason).toContain('using 50');
  });

  it('explains the plan from the latest state any replica stored', async () => {
    const { catalog, planner, queue, states, state } = setup();
    await planner.handleState(state({ snapshots: 60, smallFiles: 3, newDataFiles: 2 }));
    const other = new Planner({ queue, states, events: new InMemoryTaskEventSink(), logger });
    const explanation = await other.explain(`${catalog}/sales/orders`);
    expect(explanation?.decisions).toEqual([
      expect.objectContaining({
        type: 'cleanup',
        action: 'update',
        pending: 'prioritized',
        fired: expect.arrayContaining(['60 snapshots > 50']) as unknown,
      }),
      expect.objectContaining({
        type: 'merge',
        action: 'none',
        notFired: ['3 small files ≤ 20 (not above)', '0 delete files ≤ 10 (not above)'],
      }),
      expect.objectContaining({ type: 'sort', action: 'none' }),
      // Orphan removal is off unless the table opts in (ADR 0032), and says so.
      expect.objectContaining({
        type: 'orphans',
        action: 'none',
        reason: 'disabled: icepack.orphan.enabled is not true (off by default)',
      }),
    ]);
  });
});

describe('fairness with one slot (ADR 0028)', () => {
  it('a stream of merges still lets the cleanup out once it is overdue, oldest first', async () => {
    const { catalog, queue, states, state } = setup();
    const MINUTE = 60_000;
    const t0 = Date.parse('2026-12-02T10:00:00.000Z');
    let now = t0;
    // The planner and the aging pass go by this clock: time is driven, not slept.
    const planner = new Planner({
      queue,
      states,
      events: new InMemoryTaskEventSink(),
      logger,
      clock: () => new Date(now),
    });
    // CDC tables whose merges score 1,000 + 400 (40 delete files) + 200 (80 small files); a
    // streaming table whose cleanup scores 100 + 50. No min interval is recorded, so a
    // merged table gets its next merge as soon as its next state arrives: a stream of merges.
    const cdc = ['cdc_0', 'cdc_1', 'cdc_2'];
    const merges = { smallFiles: 80, positionDeleteFiles: 40, newDataFiles: 5, newDataShare: 0.1 };
    await planner.handleState(
      state({ snapshots: 60 }, { scannedAt: new Date(now).toISOString() }, 'stream'),
    );
    const slot = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
    // No processor: the test takes one job at a time, as a dispatcher with one slot does.
    const worker = new Worker(queueNameForCatalog(catalog), null, {
      connection: slot,
      prefix: 'icepack',
    });
    cleanup.push(async () => {
      await worker.close();
      await slot.quit();
    });
    const order: { at: number; id: string; priority: number }[] = [];
    // 12 runs of 3 minutes each: 36 minutes of one slot.
    for (let step = 0; step < 12; step++) {
      for (const name of cdc) {
        await planner.handleState(
          state(
            merges,
            { lastSequenceNumber: String(100 + step), scannedAt: new Date(now).toISOString() },
            name,
          ),
        );
      }
      await queue.age(catalog, new Date(now), DEFAULT_SCORE_OPTIONS);
      const token = randomUUID();
      const job = (await worker.getNextJob(token)) as Job<Task> | undefined;
      expect(job).toBeDefined();
      order.push({ at: (now - t0) / MINUTE, id: job!.id!, priority: job!.priority });
      await job!.moveToCompleted('done', token, false);
      now += 3 * MINUTE;
    }
    const cleanupId = `cleanup/${catalog}/sales/stream`;
    // By points alone the cleanup would wait about four hours (1,450 points at 25 per 5 min);
    // overdue after 15 minutes, it runs in the first slot from then on, before fresher merges.
    const ran = order.findIndex((o) => o.id === cleanupId);
    expect(order.slice(0, ran).every((o) => o.id.startsWith('merge/'))).toBe(true);
    expect(order[ran]).toEqual({ at: 15, id: cleanupId, priority: OVERDUE_PRIORITY });
    expect(order.filter((o) => o.id === cleanupId)).toHaveLength(1);
    // The merges kept coming around the cleanup: every table merged at least three times.
    for (const name of cdc) {
      const id = `merge/${catalog}/sales/${name}`;
      expect(order.filter((o) => o.id === id).length).toBeGreaterThanOrEqual(3);
    }
  });
});

/** The test queue's stores, read by the script and by the three reads on their own. */
function readSetup() {
  const s = setup();
  const separate = separateReads(s.states, s.queue, s.lastSucceeded);
  /** Both reads of the table, which must agree. */
  const both = async (table: TableId) => {
    const [a, b] = await Promise.all([s.reads.read(table), separate.read(table)]);
    expect(a).toEqual(b);
    return a;
  };
  return { ...s, both };
}

describe('the planner reads a table in one script (issue 17 point 6)', () => {
  it('answers what the three reads on their own answer: nothing stored', async () => {
    const { catalog, both } = readSetup();
    const read = await both(sampleTableId({ catalog }));
    expect(read.latest).toBeUndefined();
    expect(read.record).toEqual({ succeeded: {}, failures: {} });
    expect(read.jobs.merge).toEqual({ state: 'missing' });
  });

  it('answers the stored head, the waiting tasks of every group and the outcomes', async () => {
    const { catalog, queue, states, lastSucceeded, both } = readSetup();
    const table = sampleTableId({ catalog });
    const other = sampleTableId({ catalog, name: 'other' });
    const state = {
      ...partitionedTableState([dayPartition('2026-01-02', 20), dayPartition('2026-01-01', 20)]),
      table,
    };
    await states.put(state);
    const plan = planTable({ state, ...resolvePolicy({}), pending: {}, now: new Date() });
    const tasks = plan.decisions.flatMap((d) => (d.task === undefined ? [] : [d.task]));
    expect(tasks.length).toBeGreaterThan(0);
    for (const task of tasks) expect(await queue.create(task)).toBe(true);
    await queue.create({ ...tasks[0]!, id: `${tasks[0]!.id}#3` });
    await lastSucceeded.record(table, 'cleanup', '2026-12-01T10:00:00.000Z');
    await lastSucceeded.recordFailure(table, 'merge', '2026-12-01T11:00:00.000Z', 'oom');
    await lastSucceeded.recordFailure(other, 'sort', '2026-12-01T11:00:00.000Z', undefined);

    const read = await both(table);
    expect(read.latest).toEqual({ ...state, partitions: undefined });
    expect(read.jobs[tasks[0]!.type].task).toEqual(tasks[0]);
    expect(read.jobs.groups[tasks[0]!.type][2]?.state).toBe('prioritized');
    expect(read.record).toEqual({
      succeeded: { cleanup: '2026-12-01T10:00:00.000Z' },
      failures: { merge: { count: 1, lastFailedAt: '2026-12-01T11:00:00.000Z', kind: 'oom' } },
    });
  });

  it('answers a state stored before heads were, whole', async () => {
    const { catalog, states, both } = readSetup();
    const table = sampleTableId({ catalog });
    const state = { ...partitionedTableState([dayPartition('2026-01-02', 20)]), table };
    await states.put(state);
    // As a planner before heads (and packed partitions) wrote it.
    const [key] = await redis.hkeys(states.keys.heads);
    await redis.hdel(states.keys.heads, key!);
    await redis.hset(states.keys.states, key!, JSON.stringify(state));
    const read = await both(table);
    expect(read.latest).toEqual(state);
  });
});

/** Counts the scripts sent on the planner's connection while `work` runs. */
async function scriptsSent(work: () => Promise<unknown>): Promise<number> {
  const conn = redis as unknown as { evalsha: (...a: unknown[]) => Promise<unknown> };
  const evalsha = conn.evalsha;
  let sent = 0;
  conn.evalsha = (...args: unknown[]) => {
    sent++;
    return evalsha.apply(redis, args);
  };
  try {
    await work();
  } finally {
    conn.evalsha = evalsha;
  }
  return sent;
}

describe('the calls of one turn go in one command, each caller its own answer (issue 17 point 6)', () => {
  it('reads of several tables: one script, the answers of reads one at a time', async () => {
    const { catalog, queue, states, lastSucceeded, reads, both } = readSetup();
    const stored = sampleTableId({ catalog, name: 'stored' });
    const queued = sampleTableId({ catalog, name: 'queued' });
    const empty = sampleTableId({ catalog, name: 'empty' });
    const state = { ...partitionedTableState([dayPartition('2026-01-02', 20)]), table: stored };
    await states.put(state);
    await lastSucceeded.record(stored, 'cleanup', '2026-12-01T10:00:00.000Z');
    const merge = task(tableState(everything, { table: queued }), 'merge', 300);
    await queue.create(merge);
    await lastSucceeded.recordFailure(queued, 'merge', '2026-12-01T11:00:00.000Z', 'oom');

    const tables = [stored, queued, empty, stored];
    let together: Awaited<ReturnType<typeof reads.read>>[] = [];
    const sent = await scriptsSent(async () => {
      together = await Promise.all(tables.map((t) => reads.read(t)));
    });
    expect(sent).toBe(1);
    const alone: typeof together = [];
    for (const t of tables) alone.push(await both(t));
    expect(together).toEqual(alone);
    expect(together[0]?.latest).toEqual({ ...state, partitions: undefined });
    expect(together[1]?.jobs.merge.task).toEqual(merge);
    expect(together[1]?.record.failures.merge?.kind).toBe('oom');
    expect(together[2]?.latest).toBeUndefined();
  });

  it('updates of several jobs: one script, each its own outcome (updated, not waiting, changed)', async () => {
    const { catalog, queue, state } = setup();
    const a = task(state(everything, {}, 'a'), 'merge', 300);
    const b = task(state(everything, {}, 'b'), 'merge', 300);
    const gone = task(state(everything, {}, 'gone'), 'merge', 300);
    for (const t of [a, b]) await queue.create(t);
    const rawB = (await queue.inspect(b.table)).merge.raw;
    // b's data changes after it was read: the compare-and-set on it must fail.
    expect(await queue.update({ ...b, score: { ...b.score, priority: 250 } })).toBe('updated');

    let outcomes: string[] = [];
    const sent = await scriptsSent(async () => {
      outcomes = await Promise.all([
        queue.update({ ...a, score: { ...a.score, priority: 100 } }),
        queue.update({ ...gone, score: { ...gone.score, priority: 100 } }),
        queue.update({ ...b, score: { ...b.score, priority: 50 } }, rawB),
      ]);
    });
    expect(sent).toBe(1);
    expect(outcomes).toEqual(['updated', 'not-waiting', 'changed']);
    const waiting = await queue.waiting(catalog);
    expect(waiting.map((w) => [w.task.table.name, w.priority])).toEqual([
      ['a', 100],
      ['b', 250],
    ]);
  });

  it('puts of several states: one script, each state and head stored', async () => {
    const { catalog, states } = setup();
    const made = ['x', 'y', 'z'].map((name, i) => ({
      ...partitionedTableState([dayPartition('2026-01-02', 10 + i)]),
      table: sampleTableId({ catalog, name }),
    }));
    const sent = await scriptsSent(() => Promise.all(made.map((s) => states.put(s))));
    expect(sent).toBe(1);
    for (const s of made) {
      expect(await states.get(tableKey(s.table))).toEqual(s);
      expect(await states.head(tableKey(s.table))).toEqual({ ...s, partitions: undefined });
    }
    expect(await states.catalogs()).toEqual([catalog]);
  });

  it("adds of several tasks: one script, each job the job BullMQ's Queue.add makes", async () => {
    const { catalog, queue, state } = setup();
    const tasks = ['a', 'b', 'c'].map((name, i) =>
      task(state(everything, {}, name), i === 1 ? 'cleanup' : 'merge', 300 - 100 * i),
    );
    // The same tasks added as the planner added them before: `Queue.add`, one at a time, on a
    // queue under another prefix (the same names below it).
    const refPrefix = `ref-${catalog}`;
    const ref = new Queue(queueNameForCatalog(catalog), {
      connection: queueRedis,
      prefix: refPrefix,
    });
    cleanup.push(async () => {
      await ref.obliterate({ force: true });
      await ref.close();
    });
    for (const t of tasks)
      await ref.add(t.type, t, {
        jobId: t.id,
        priority: t.score.priority,
        removeOnComplete: true,
        removeOnFail: true,
      });

    let added: boolean[] = [];
    const sent = await scriptsSent(async () => {
      added = await Promise.all(tasks.map((t) => queue.create(t)));
    });
    expect(sent).toBe(1);
    expect(added).toEqual([true, true, true]);
    // Both queues' meta written by their Queue objects.
    await Promise.all([ref.getVersion(), queue.queue(catalog).getVersion()]);
    const ours = await dumpQueue(`icepack:${queueNameForCatalog(catalog)}:`);
    const theirs = await dumpQueue(`${refPrefix}:${queueNameForCatalog(catalog)}:`);
    // The planner's own created index, beside BullMQ's keys, one entry per task.
    const created = ours['icepack:created'] as string[];
    expect(
      Object.fromEntries(created.flatMap((v, i) => (i % 2 ? [] : [[v, created[i + 1]]]))),
    ).toEqual(Object.fromEntries(tasks.map((t) => [t.id, String(Date.parse(t.createdAt))])));
    expect(created.length).toBe(2 * tasks.length);
    delete ours['icepack:created'];
    expect(ours).toEqual(theirs);
    expect(Object.keys(ours)).toEqual(
      expect.arrayContaining(['events', 'id', 'marker', 'meta', 'pc', 'prioritized']),
    );

    // An id that has a job is a duplicate: left as it is, as BullMQ leaves it.
    const again = { ...tasks[0]!, score: { ...tasks[0]!.score, priority: 7 } };
    expect(await queue.create(again)).toBe(true);
    expect((await queue.inspect(again.table)).merge.task).toEqual(tasks[0]);
    // What BullMQ's `Job` refuses, refused before anything is written.
    const fractional = {
      ...tasks[0]!,
      id: `${tasks[0]!.id}x`,
      score: { ...tasks[0]!.score, priority: 1.5 },
    };
    await expect(queue.create(fractional)).rejects.toThrow(/priority 1.5 is not a BullMQ priority/);
    // And a real worker runs them by priority.
    expect(await runOrder(catalog, 3)).toEqual(tasks.map((t) => t.id).reverse());
  });
});

/**
 * Every key under a queue's prefix, by the rest of its name, with its content in a form two
 * queues can be compared in: a job's `timestamp` and a stream entry's id (times) left out, a
 * job's options parsed (Lua writes a table's keys in no set order).
 */
async function dumpQueue(base: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const key of (await redis.keys(`${base}*`)).sort()) {
    const name = key.slice(base.length);
    const type = await redis.type(key);
    if (type === 'hash') {
      const hash = await redis.hgetall(key);
      if ('timestamp' in hash) hash.timestamp = 'T';
      out[name] = 'opts' in hash ? { ...hash, opts: JSON.parse(hash.opts) as unknown } : hash;
    } else if (type === 'zset') out[name] = await redis.zrange(key, 0, -1, 'WITHSCORES');
    else if (type === 'stream') out[name] = (await redis.xrange(key, '-', '+')).map(([, f]) => f);
    else if (type === 'list') out[name] = await redis.lrange(key, 0, -1);
    else out[name] = await redis.get(key);
  }
  return out;
}
