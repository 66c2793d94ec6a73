// The planner benchmark with partition-level input (issue 17 point 6): tables of N partitions
// (the state lists the 100 that need work most, plus totals, as the scanner sends them),
// planned and enqueued by one replica against real Redis — old and new planner code
// alternating in one process, so both see the same machine and load.
// Besides states/s, each round records CPU per state — this process's and Redis's (INFO cpu) —
// which a shared, loaded machine distorts far less than wall time.
// Run (with Redis up: bash deploy/local/infra.sh up redis):
//   node bench/planner/plan-partitions.ts <old checkout root> [tables] [partitions] [in-flight] [passes] [states|messages] [warm-up passes]
// e.g. node bench/planner/plan-partitions.ts /work/main 1000 1000 16 3
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { Writable } from 'node:stream';
import type { RedisOptions } from 'ioredis';
import { createLogger, createRedisConnection } from '@icepack/runtime';
import {
  MAX_TABLE_STATE_PARTITIONS,
  tableKey,
  type createEnvelope,
  type serializeEnvelope,
  type TableState,
} from '@icepack/types';
import {
  type InMemoryTaskEventSink,
  type Planner,
  type TableStateStore,
  type TaskQueue,
} from '@icepack/planner/testing';
import { machine } from '../iceberg/machine.ts';
import { partitionStates } from './partition-states.ts';

const oldRoot = resolve(process.argv[2] ?? '/work/main');
const newRoot = resolve(import.meta.dirname, '..', '..');
const tables = Number(process.argv[3] ?? 1_000);
const partitions = Number(process.argv[4] ?? 1_000);
const inFlight = Number(process.argv[5] ?? 16);
const passes = Number(process.argv[6] ?? 3);
// `states` (default): the planner is handed parsed states, as in the earlier result files.
// `messages`: each state as the Kafka message the scanner sends, parsed and validated by each
// code's own `parseMessage` before it is planned — what a replica's consumer also does per
// state (~1 ms before issue 17's speed step, more than planning it).
const input = process.argv[7] ?? 'states';
if (input !== 'states' && input !== 'messages')
  throw new Error(`input must be states or messages, not ${input}`);
// Unmeasured passes of each code first (default 1): a replica runs for days, so what it costs
// per state is the warmed-up code's. Without one, the first pass also pays for V8 compiling
// the code (the first code's first round 25–55 % above its second pass's, 9 runs on
// 2026-12-04); 0 measures as the result files before planner-plan-partitions-warm-2026-12-04.md.
const warmUp = Number(process.argv[8] ?? 1);
if (!Number.isInteger(warmUp) || warmUp < 0)
  throw new Error(`warm-up passes must be a whole number ≥ 0, not ${process.argv[8]}`);
const redisUrl = `redis://127.0.0.1:${process.env.ICEPACK_REDIS_PORT ?? '16379'}`;
const logger = createLogger({
  service: 'bench',
  level: 'warn',
  destination: new Writable({ write: (_c, _e, cb) => cb() }),
});
// For INFO and the checks; each code plans on a connection of its own, made with that code's
// planner options (auto-pipelining since issue 17's Lua/pipelining step; none before).
const connection = createRedisConnection(redisUrl, { role: 'client', logger });
const redis = connection.redis;

interface PlannerCode {
  readonly label: string;
  readonly Planner: typeof Planner;
  readonly TableStateStore: typeof TableStateStore;
  readonly InMemoryTaskEventSink: typeof InMemoryTaskEventSink;
  readonly TaskQueue: typeof TaskQueue;
  /** Each code's own store of task outcomes (what its planner reads per state). */
  readonly LastSucceededStore: new (o: { connection: typeof redis; key: string }) => {
    clear(): Promise<void>;
  };
  /**
   * How this code's `main.ts` reads a table before planning (one script since issue 17's
   * speed step; absent before: the planner's own separate reads).
   */
  readonly reads?: (o: {
    connection: typeof redis;
    states: TableStateStore;
    queue: TaskQueue;
    lastSucceeded: unknown;
  }) => unknown;
  /** The planner's connection, with the options this code's `main.ts` gives it. */
  readonly redis: typeof redis;
  readonly close: () => Promise<void>;
  /** This code's parse of a Kafka message value (`@icepack/types`). */
  readonly parseMessage: (
    value: Uint8Array,
    expected?: readonly ['TableScanned'],
  ) => { payload: unknown };
  /**
   * The `TableScanned` message of a state as this code's scanner can write it: the newest
   * version the code accepts (version 2, the partition list packed, since ADR 0050).
   */
  readonly message: (state: TableState) => Uint8Array;
}

async function load(label: string, root: string): Promise<PlannerCode> {
  const at = (path: string) => import(resolve(root, 'services/planner/src/adapters', path));
  // A checkout from before the planner had options of its own: ioredis's defaults.
  const options = await at('redis-options.ts').then(
    (m: { PLANNER_REDIS_OPTIONS: RedisOptions }) => m.PLANNER_REDIS_OPTIONS,
    () => ({}),
  );
  const own = createRedisConnection(redisUrl, { role: 'client', logger, redis: options });
  const reads = await at('table-reads.ts').then(
    (m: { ScriptedTableReads: new (o: unknown) => unknown }) => (o: unknown) =>
      new m.ScriptedTableReads(o),
    () => undefined,
  );
  const messages = (await import(resolve(root, 'packages/types/src/messages.ts'))) as {
    parseMessage: PlannerCode['parseMessage'];
    createEnvelope: typeof createEnvelope;
    serializeEnvelope: typeof serializeEnvelope;
  };
  const { MessageTypes } = (await import(resolve(root, 'packages/types/src/message-types.ts'))) as {
    MessageTypes: { TableScanned: { accepts: readonly number[] } };
  };
  const version = Math.max(...MessageTypes.TableScanned.accepts);
  return {
    label,
    reads,
    redis: own.redis,
    close: () => own.close(),
    parseMessage: messages.parseMessage,
    message: (state) =>
      Buffer.from(
        messages.serializeEnvelope(
          messages.createEnvelope('TableScanned', tableKey(state.table), state, { version }),
        ),
      ),
    Planner: ((await at('planner.ts')) as { Planner: PlannerCode['Planner'] }).Planner,
    TableStateStore: (
      (await at('state-store.ts')) as { TableStateStore: PlannerCode['TableStateStore'] }
    ).TableStateStore,
    InMemoryTaskEventSink: (
      (await at('task-event-sink.ts')) as {
        InMemoryTaskEventSink: PlannerCode['InMemoryTaskEventSink'];
      }
    ).InMemoryTaskEventSink,
    TaskQueue: ((await at('task-queue.ts')) as { TaskQueue: PlannerCode['TaskQueue'] }).TaskQueue,
    LastSucceededStore: (
      (await at('last-succeeded.ts')) as {
        LastSucceededStore: PlannerCode['LastSucceededStore'];
      }
    ).LastSucceededStore,
  };
}

const states = (catalog: string, seq: number, smallFiles: number): TableState[] =>
  partitionStates(catalog, seq, smallFiles, tables, partitions);

async function pool<T>(items: readonly T[], handle: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < items.length) await handle(items[next++]!);
    }),
  );
}

interface Row {
  readonly code: string;
  readonly pass: number;
  readonly round: string;
  readonly perSecond: number;
  /** CPU ms per state: this process, and Redis. */
  readonly nodeMs: number;
  readonly redisMs: number;
  readonly load: number;
}

/** Redis's CPU seconds so far (user + sys, main thread and all). */
async function redisCpu(): Promise<number> {
  const info = await redis.info('cpu');
  const at = (field: string) => Number(new RegExp(`${field}:([0-9.]+)`).exec(info)?.[1] ?? 0);
  return at('used_cpu_user') + at('used_cpu_sys');
}

async function run(code: PlannerCode, pass: number): Promise<Row[]> {
  const catalog = `bench-${randomUUID().slice(0, 8)}`;
  const redis = code.redis;
  const queue = new code.TaskQueue({ connection: redis });
  const store = new code.TableStateStore({
    connection: redis,
    statesKey: `bench:${catalog}:states`,
    catalogsKey: `bench:${catalog}:catalogs`,
  });
  const lastSucceeded = new code.LastSucceededStore({
    connection: redis,
    key: `bench:${catalog}:succeeded`,
  });
  const planner = new code.Planner({
    queue,
    states: store,
    events: new code.InMemoryTaskEventSink(),
    logger,
    lastSucceeded: lastSucceeded as never,
    ...(code.reads === undefined
      ? {}
      : { reads: code.reads({ connection: redis, states: store, queue, lastSucceeded }) as never }),
  });
  const rows: Row[] = [];
  const round = async (name: string, states: readonly TableState[]) => {
    // Made before the round, by this code's own types: the same bytes for both codes unless
    // one writes a newer version (ADR 0050: version 2, the partition list packed).
    const batch: readonly (TableState | Uint8Array)[] =
      input === 'states' ? states : states.map((state) => code.message(state));
    const redisBefore = await redisCpu();
    const cpuBefore = process.cpuUsage();
    const start = process.hrtime.bigint();
    await pool(batch, (s) =>
      planner.handleState(
        // With the types the consumer expects, as the runtime's consumer calls it.
        s instanceof Uint8Array
          ? (code.parseMessage(s, ['TableScanned']).payload as TableState)
          : s,
      ),
    );
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const cpu = process.cpuUsage(cpuBefore);
    const redisSeconds = (await redisCpu()) - redisBefore;
    rows.push({
      code: code.label,
      pass,
      round: name,
      perSecond: batch.length / seconds,
      nodeMs: (cpu.user + cpu.system) / 1000 / batch.length,
      redisMs: (redisSeconds * 1000) / batch.length,
      load: loadavg()[0]!,
    });
  };
  try {
    await round('new tables (2 tasks created each)', states(catalog, 1, 8));
    await round('newer states (2 waiting tasks updated each)', states(catalog, 2, 12));
    const waiting = await queue.queue(catalog).getPrioritizedCount();
    if (waiting !== 2 * tables)
      throw new Error(`${code.label}: expected ${2 * tables} waiting tasks, found ${waiting}`);
  } finally {
    await queue.queue(catalog).obliterate({ force: true });
    await queue.close();
    await store.clear();
    await lastSucceeded.clear();
  }
  return rows;
}

const codes = [await load(`old (${oldRoot})`, oldRoot), await load(`new (${newRoot})`, newRoot)];
await Promise.all(codes.map((c) => c.redis.ping()));
for (let pass = 1; pass <= warmUp; pass++) for (const code of codes) await run(code, 0);
const rows: Row[] = [];
for (let pass = 1; pass <= passes; pass++) {
  // Alternate which goes first, so neither always runs on a warmer process.
  for (const code of pass % 2 === 1 ? codes : [...codes].reverse())
    rows.push(...(await run(code, pass)));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rounds = [...new Set(rows.map((r) => r.round))];
const of = (c: PlannerCode, round: string, f: (r: Row) => number) =>
  median(rows.filter((r) => r.code === c.label && r.round === round).map(f));
const summary = codes.flatMap((c) =>
  rounds.map(
    (round) =>
      `| ${c.label} | ${round} | **${Math.round(of(c, round, (r) => r.perSecond))}** | ${of(c, round, (r) => r.nodeMs).toFixed(3)} | ${of(c, round, (r) => r.redisMs).toFixed(3)} | ${Math.round(1000 / of(c, round, (r) => r.nodeMs))} |`,
  ),
);
console.log(`# Planner with partition-level input: old vs new, alternating (one replica, real Redis)

Command: \`node bench/planner/plan-partitions.ts ${oldRoot} ${tables} ${partitions} ${inFlight} ${passes} ${input} ${warmUp}\`
(${warmUp} unmeasured warm-up pass${warmUp === 1 ? '' : 'es'} of each code first; ${tables} tables of ${partitions} partitions; each state lists the ${Math.min(partitions, MAX_TABLE_STATE_PARTITIONS)} that need work most, plus totals; ${inFlight} states in flight.)
Target: ≥ 2,000 states/s per replica.

Median over ${passes} passes (CPU ms per state: this process / Redis; the last column is the
states/s one replica's CPU allows, 1000 / its ms per state, what a planner that is not waiting
on a loaded machine reaches at most):

| code | round | states/s | node CPU ms/state | Redis CPU ms/state | node-CPU-bound states/s |
|---|---|---|---|---|---|
${summary.join('\n')}

Every pass (load = 1-minute load average after the round):

| pass | code | round | states/s | node CPU ms/state | Redis CPU ms/state | load |
|---|---|---|---|---|---|---|
${rows.map((r) => `| ${r.pass} | ${r.code} | ${r.round} | ${Math.round(r.perSecond)} | ${r.nodeMs.toFixed(3)} | ${r.redisMs.toFixed(3)} | ${r.load.toFixed(1)} |`).join('\n')}

## Machine

\`\`\`
${machine()}
redis: ${(await redis.info('server')).match(/redis_version:(\S+)/)?.[1] ?? '?'} on 127.0.0.1 (same machine)
\`\`\``);
for (const c of codes) await c.close();
await connection.close();
