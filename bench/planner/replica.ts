// One real planner replica's throughput (issue 17 point 6): table states as the scanner sends
// them (`TableScanned` version 2, the 100 neediest of each table's partitions listed) on a
// fresh Kafka topic, consumed by the planner's own path — the runtime's `EnvelopeConsumer`
// with `tableStateHandlers`, `ICEPACK_PLANNER_CONCURRENCY` partitions at a time, the Planner
// on Redis with the stores, queue and scripted reads `main.ts` gives it, and its task events
// sent by `KafkaTaskEventSink` on a real producer (`acks: -1`). plan-partitions.ts measures
// CPU per state with 16 states in flight and an in-memory sink; this measures what a replica
// does per second, where each state waits on its own Redis and Kafka round trips.
// Old and new code alternate in one process (each checkout's runtime and planner, loaded by
// path as plan-partitions.ts does), so both see the same machine and load.
// Run (with Redis and Kafka up: bash deploy/local/infra.sh up redis kafka):
//   node bench/planner/replica.ts <old checkout root> [tables] [partitions] [passes] [warm-up passes] [concurrency] [topic partitions] [messages in flight]
// ICEPACK_BENCH_PROFILE=<dir> also writes a CPU profile of each measured round, from its first
// handling to its last (only this process's work on that round; no input generation).
// e.g. node bench/planner/replica.ts /work/main 1000 1000 3 1 3 3 1
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { Writable } from 'node:stream';
import * as runtime from '@icepack/runtime';
import { tableKey, type TableState } from '@icepack/types';
import { machine } from '../iceberg/machine.ts';
import { partitionStates } from './partition-states.ts';

const oldRoot = resolve(process.argv[2] ?? '/work/main');
const newRoot = resolve(import.meta.dirname, '..', '..');
const tables = Number(process.argv[3] ?? 1_000);
const partitions = Number(process.argv[4] ?? 1_000);
const passes = Number(process.argv[5] ?? 3);
const warmUp = Number(process.argv[6] ?? 1);
// `ICEPACK_PLANNER_CONCURRENCY`'s default, and the topic's partitions (`ensureTopics`' default).
const concurrency = Number(process.argv[7] ?? 3);
const topicPartitions = Number(process.argv[8] ?? 3);
// Messages of one partition handled at once (`messagesInFlight`, ADR 0052; 1 = one at a time,
// the only way before it). A list (`8,32`) runs each code at each value, alternating, to
// compare settings on the same machine and load (`ICEPACK_PLANNER_STATES_IN_FLIGHT`'s default).
const inFlightArg = process.argv[9] ?? '1';
const inFlights = inFlightArg.split(',').map(Number);
for (const n of inFlights)
  if (!Number.isInteger(n) || n < 1)
    throw new Error('messages in flight must be whole numbers ≥ 1');
for (const [name, n] of Object.entries({
  tables,
  partitions,
  passes,
  concurrency,
  topicPartitions,
}))
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number ≥ 1`);
if (!Number.isInteger(warmUp) || warmUp < 0) throw new Error('warm-up passes must be ≥ 0');

const redisUrl = `redis://127.0.0.1:${process.env.ICEPACK_REDIS_PORT ?? '16379'}`;
const brokers = [`127.0.0.1:${process.env.ICEPACK_KAFKA_PORT ?? '19092'}`];
const logger = runtime.createLogger({
  service: 'bench',
  level: 'warn',
  destination: new Writable({ write: (_c, _e, cb) => cb() }),
});
// For INFO, the input messages and topic admin: this checkout's runtime.
const connection = runtime.createRedisConnection(redisUrl, { role: 'client', logger });
const admin = new runtime.KafkaClient({ brokers, clientId: 'bench-replica-admin', logger });

/** The part of each checkout's code the replica is made of. */
interface ReplicaCode {
  readonly label: string;
  readonly root: string;
  /** Messages of one partition in flight for this run. */
  readonly inFlight: number;
  readonly rt: typeof runtime;
  // Each checkout's own classes; typed loosely, their shapes differ between versions.
  readonly planner: Record<string, new (...o: never[]) => never>;
  readonly tableStateHandlers: (planner: unknown) => Record<string, unknown>;
  readonly redisOptions: object;
  /** The planner's table-state fetch size (undefined before it had one: kafkajs's 1 MiB). */
  readonly fetchBytes: number | undefined;
  /** The scanner's message of a state, by this code's types (the newest version it accepts). */
  readonly message: (state: TableState) => Buffer;
}

async function load(label: string, root: string, inFlight: number): Promise<ReplicaCode> {
  const at = async <T = new (...o: never[]) => never>(path: string, name: string): Promise<T> =>
    ((await import(resolve(root, 'services/planner/src/adapters', path))) as Record<string, T>)[
      name
    ]!;
  const rt = (await import(resolve(root, 'packages/runtime/src/index.ts'))) as typeof runtime;
  const messages = (await import(resolve(root, 'packages/types/src/messages.ts'))) as {
    createEnvelope: (t: string, k: string, p: unknown, o: { version: number }) => unknown;
    serializeEnvelope: (e: unknown) => Uint8Array | string;
  };
  const { MessageTypes } = (await import(resolve(root, 'packages/types/src/message-types.ts'))) as {
    MessageTypes: { TableScanned: { accepts: readonly number[] } };
  };
  const version = Math.max(...MessageTypes.TableScanned.accepts);
  return {
    label,
    root,
    inFlight,
    rt,
    planner: {
      Planner: await at('planner.ts', 'Planner'),
      TableStateStore: await at('state-store.ts', 'TableStateStore'),
      TaskQueue: await at('task-queue.ts', 'TaskQueue'),
      LastSucceededStore: await at('last-succeeded.ts', 'LastSucceededStore'),
      ScriptedTableReads: await at('table-reads.ts', 'ScriptedTableReads'),
      ConsoleStore: await at('console-store.ts', 'ConsoleStore'),
      KafkaTaskEventSink: await at('task-event-sink.ts', 'KafkaTaskEventSink'),
    },
    tableStateHandlers: await at<ReplicaCode['tableStateHandlers']>(
      'table-state-handlers.ts',
      'tableStateHandlers',
    ),
    redisOptions: await at<object>('redis-options.ts', 'PLANNER_REDIS_OPTIONS'),
    fetchBytes: (
      (await import(resolve(root, 'services/planner/src/config.ts'))) as {
        DEFAULT_FETCH_BYTES_PER_PARTITION?: number;
      }
    ).DEFAULT_FETCH_BYTES_PER_PARTITION,
    message: (state) =>
      Buffer.from(
        messages.serializeEnvelope(
          messages.createEnvelope('TableScanned', tableKey(state.table), state, { version }),
        ),
      ),
  };
}

interface Row {
  readonly code: string;
  readonly pass: number;
  readonly round: string;
  readonly perSecond: number;
  /** Wall ms from a handler's start to its end, median and 99th percentile. */
  readonly p50: number;
  readonly p99: number;
  /** CPU ms per state: this process, Redis, the Kafka broker. */
  readonly nodeMs: number;
  readonly redisMs: number;
  readonly kafkaMs: number;
  readonly load: number;
}

async function redisCpu(): Promise<number> {
  const info = await connection.redis.info('cpu');
  const at = (field: string) => Number(new RegExp(`${field}:([0-9.]+)`).exec(info)?.[1] ?? 0);
  return at('used_cpu_user') + at('used_cpu_sys');
}

/** The local broker's CPU seconds (its pid from infra.sh's state), or NaN if not found. */
function kafkaCpu(): number {
  try {
    const pid = readFileSync(`${process.env.ICEPACK_RUN}/kafka/kafka.pid`, 'utf8').trim();
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime: fields 14 and 15 of /proc/pid/stat, 12 and 13 after the name.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

const profileDir = process.env.ICEPACK_BENCH_PROFILE;
const inspector = profileDir === undefined ? undefined : new Session();
if (inspector !== undefined && profileDir !== undefined) {
  mkdirSync(profileDir, { recursive: true });
  inspector.connect();
  await inspector.post('Profiler.enable');
  await inspector.post('Profiler.setSamplingInterval', { interval: 200 });
}

const quantile = (xs: readonly number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;

/** One pass: two rounds (new tables; newer states of them) through a fresh replica. */
async function run(code: ReplicaCode, pass: number): Promise<Row[]> {
  const id = randomUUID().slice(0, 8);
  const catalog = `bench-${id}`;
  const eventsTopic = `bench.replica.${id}.task-events`;
  const dlqTopic = `bench.replica.${id}.dlq`;
  const groupId = `bench-replica-${id}`;
  const { rt, planner: P } = code;
  await rt.ensureTopics(admin, [
    { name: eventsTopic, cleanupPolicy: 'delete', partitions: topicPartitions },
    { name: dlqTopic, cleanupPolicy: 'delete', partitions: 1 },
  ]);
  // As main.ts: the service's Redis connection with the planner's options, and one for
  // BullMQ's queue objects (a code that takes no `queueConnection` ignores it), one Kafka
  // client and one producer for the task events and the DLQ.
  const open = (connectionName: string) =>
    rt.createRedisConnection(redisUrl, {
      role: 'producer',
      logger,
      connectionName,
      redis: code.redisOptions,
    });
  const redis = open('icepack-producer');
  const queueRedis = open('icepack-planner-queues');
  const kafka = new rt.KafkaClient({ brokers, clientId: groupId, logger });
  const producer = new rt.EnvelopeProducer(kafka);
  await producer.connect();
  const connection = redis.redis;
  const queue = new P.TaskQueue!({
    connection,
    queueConnection: queueRedis.redis,
  } as never) as unknown as {
    queue(c: string): {
      getPrioritizedCount(): Promise<number>;
      obliterate(o: object): Promise<void>;
    };
    close(): Promise<void>;
  };
  const states = new P.TableStateStore!({
    connection,
    statesKey: `bench:${catalog}:states`,
    catalogsKey: `bench:${catalog}:catalogs`,
  } as never) as unknown as { clear(): Promise<void> };
  const lastSucceeded = new P.LastSucceededStore!({
    connection,
    key: `bench:${catalog}:succeeded`,
  } as never) as unknown as { clear(): Promise<void> };
  const events = new P.KafkaTaskEventSink!(producer as never, eventsTopic as never);
  const planner = new P.Planner!({
    queue,
    states,
    lastSucceeded,
    events,
    logger,
    pauses: new P.ConsoleStore!({ connection, prefix: `bench:${catalog}:console` } as never),
    reads: new P.ScriptedTableReads!({ connection, states, queue, lastSucceeded } as never),
  } as never);
  const handlers = code.tableStateHandlers(planner) as {
    handlers: { TableScanned: (e: unknown, c: unknown) => Promise<void> };
    onTombstone: unknown;
  };

  const rows: Row[] = [];
  // Each round's handlings: when the first started, when the last ended, each one's time.
  let expected = 0;
  let started: bigint | undefined;
  let cpuAt: NodeJS.CpuUsage | undefined;
  let redisAt = 0;
  let kafkaAt = 0;
  let durations: number[] = [];
  let done: (() => void) | undefined;
  const consumers: { stop(): Promise<void> }[] = [];
  const topics = [eventsTopic, dlqTopic];
  // Writes the rounds' input; its own, disconnected before the topics are deleted (a producer
  // that knows a topic refreshes its metadata, and the broker creates the topic again).
  const inputProducer = new runtime.EnvelopeProducer(admin);
  await inputProducer.connect();
  const round = async (name: string, batch: readonly TableState[]) => {
    // Each round on a topic and in a group of its own, every message written before the
    // replica starts reading: the round times the replica alone (from its first handling).
    const stateTopic = `bench.replica.${id}.table-state-${rows.length}`;
    topics.push(stateTopic);
    await rt.ensureTopics(admin, [
      { name: stateTopic, cleanupPolicy: 'compact', partitions: topicPartitions },
    ]);
    // The same bytes for both codes unless one writes a newer version. One table per key,
    // spread over the partitions as the scanner's are.
    const values = batch.map((s) => ({ key: tableKey(s.table), value: code.message(s) }));
    await Promise.all(values.map((v) => inputProducer.sendRaw(stateTopic, v.key, v.value)));
    expected = batch.length;
    durations = [];
    started = undefined;
    const finished = new Promise<void>((r) => (done = r));
    const consumer = new rt.EnvelopeConsumer(kafka, {
      groupId: `${groupId}-${rows.length}`,
      topics: [stateTopic],
      producer,
      dlqTopic,
      partitionsConsumedConcurrently: concurrency,
      // Ignored by a runtime without it (before ADR 0052).
      ...({ messagesInFlight: code.inFlight } as object),
      // As main.ts sets it (its default); BENCH_FETCH_BYTES=<bytes> tries another (ignored by
      // code without the option).
      ...((process.env.BENCH_FETCH_BYTES ?? code.fetchBytes) !== undefined
        ? { maxBytesPerPartition: Number(process.env.BENCH_FETCH_BYTES ?? code.fetchBytes) }
        : {}),
      onTombstone: handlers.onTombstone as never,
      handlers: {
        TableScanned: async (envelope, context) => {
          if (started === undefined) {
            if (pass > 0) await inspector?.post('Profiler.start');
            started = process.hrtime.bigint();
            cpuAt = process.cpuUsage();
            kafkaAt = kafkaCpu();
            // Its own round trip, but before the first state is handled and once per round.
            redisAt = await redisCpu();
          }
          const t0 = performance.now();
          await handlers.handlers.TableScanned(envelope, context);
          durations.push(performance.now() - t0);
          if (durations.length === expected) done?.();
        },
      },
    });
    consumers.push(consumer);
    await consumer.start();
    await finished;
    const ended = process.hrtime.bigint();
    const cpu = process.cpuUsage(cpuAt);
    if (inspector !== undefined && pass > 0) {
      const { profile } = await inspector.post('Profiler.stop');
      const file = `${profileDir}/${code.label.split(' ')[0]}-${code.inFlight}-${pass}-${rows.length}.cpuprofile`;
      writeFileSync(file, JSON.stringify(profile));
    }
    const kafkaSeconds = kafkaCpu() - kafkaAt;
    const redisSeconds = (await redisCpu()) - redisAt;
    console.error(`${new Date().toISOString()} ${code.label} pass ${pass}: ${name} done`);
    rows.push({
      code: code.label,
      pass,
      round: name,
      perSecond: batch.length / (Number(ended - started!) / 1e9),
      p50: quantile(durations, 0.5),
      p99: quantile(durations, 0.99),
      nodeMs: (cpu.user + cpu.system) / 1000 / batch.length,
      redisMs: (redisSeconds * 1000) / batch.length,
      kafkaMs: (kafkaSeconds * 1000) / batch.length,
      load: loadavg()[0]!,
    });
  };
  // As in a running planner, the events topic has been written to and the catalog's queue is
  // open before the first state. Without this, some passes' new-tables round (~0.5 s) stood
  // idle for 100-300 ms early on in profiles, every state in flight waiting: a first use
  // (the first produce to a topic created a moment ago, or the queue's first command), not
  // the replica's throughput. With both done first no pass showed it.
  await producer.sendRaw(eventsTopic, 'warm-up', null);
  await queue.queue(catalog).getPrioritizedCount();
  try {
    await round(
      'new tables (2 tasks created each)',
      partitionStates(catalog, 1, 8, tables, partitions),
    );
    await round(
      'newer states (2 waiting tasks updated each)',
      partitionStates(catalog, 2, 12, tables, partitions),
    );
    const waiting = await queue.queue(catalog).getPrioritizedCount();
    if (waiting !== 2 * tables)
      throw new Error(`${code.label}: expected ${2 * tables} waiting tasks, found ${waiting}`);
    // Every state's events reached the topic: 2 per state per round (and the warm-up's).
    const eventsWritten = await topicSize(eventsTopic);
    if (eventsWritten !== 4 * tables + 1)
      throw new Error(
        `${code.label}: expected ${4 * tables + 1} task events, found ${eventsWritten}`,
      );
  } finally {
    console.error(`${new Date().toISOString()} ${code.label} pass ${pass}: cleaning up`);
    for (const c of consumers) await c.stop();
    await producer.disconnect();
    await inputProducer.disconnect();
    await runtime.deleteTopics(admin, topics);
    const a = admin.kafka.admin();
    await a.connect();
    await a.deleteGroups(consumers.map((_, i) => `${groupId}-${i}`)).catch(() => undefined);
    await a.disconnect();
    await kafka.close();
    await queue.queue(catalog).obliterate({ force: true });
    await queue.close();
    await states.clear();
    await lastSucceeded.clear();
    await redis.close();
    await queueRedis.close();
  }
  return rows;
}

async function topicSize(topic: string): Promise<number> {
  const a = admin.kafka.admin();
  await a.connect();
  try {
    const offsets = await a.fetchTopicOffsets(topic);
    return offsets.reduce((n, o) => n + Number(o.high) - Number(o.low), 0);
  } finally {
    await a.disconnect();
  }
}

// Old and new (one of them when both are this checkout), each at every in-flight value given.
const roots =
  oldRoot === newRoot
    ? [['this', newRoot]]
    : [
        ['old', oldRoot],
        ['new', newRoot],
      ];
const codes: ReplicaCode[] = [];
for (const n of inFlights)
  for (const [name, root] of roots)
    codes.push(
      await load(`${name} (${root})${inFlights.length > 1 ? `, ${n} in flight` : ''}`, root!, n),
    );
for (let pass = 1; pass <= warmUp; pass++) for (const code of codes) await run(code, 0);
const rows: Row[] = [];
for (let pass = 1; pass <= passes; pass++) {
  // Alternate which goes first, so neither always runs on a warmer process.
  for (const code of pass % 2 === 1 ? codes : [...codes].reverse())
    rows.push(...(await run(code, pass)));
}
const median = (xs: number[]) => quantile(xs, 0.5);
const rounds = [...new Set(rows.map((r) => r.round))];
const of = (c: ReplicaCode, round: string, f: (r: Row) => number) =>
  median(rows.filter((r) => r.code === c.label && r.round === round).map(f));
const summary = codes.flatMap((c) =>
  rounds.map(
    (round) =>
      `| ${c.label} | ${round} | **${Math.round(of(c, round, (r) => r.perSecond))}** | ${of(c, round, (r) => r.p50).toFixed(1)} | ${of(c, round, (r) => r.p99).toFixed(1)} | ${of(c, round, (r) => r.nodeMs).toFixed(3)} | ${of(c, round, (r) => r.redisMs).toFixed(3)} | ${of(c, round, (r) => r.kafkaMs).toFixed(3)} |`,
  ),
);
console.log(`# One real planner replica: ${roots.length > 1 ? 'old vs new' : 'settings'}, alternating (real Kafka and Redis)

Command: \`node bench/planner/replica.ts ${oldRoot} ${tables} ${partitions} ${passes} ${warmUp} ${concurrency} ${topicPartitions} ${inFlightArg}\`
(${warmUp} unmeasured warm-up pass${warmUp === 1 ? '' : 'es'} of each code first; per round ${tables} \`TableScanned\` messages of tables of ${partitions} partitions on a fresh topic of ${topicPartitions} partitions, consumed by one replica with \`partitionsConsumedConcurrently\` ${concurrency} and \`messagesInFlight\` ${inFlightArg} (ignored by code without it); timed from the first handler's start to the last one's end.)
Target: ≥ 2,000 states/s per replica.

Median over ${passes} passes (handler ms: one state's handling, wall; CPU ms per state: this
process / Redis / the Kafka broker):

| code | round | states/s | handler ms p50 | handler ms p99 | node CPU ms/state | Redis CPU ms/state | Kafka CPU ms/state |
|---|---|---|---|---|---|---|---|
${summary.join('\n')}

Every pass (load = 1-minute load average after the round):

| pass | code | round | states/s | handler ms p50 | p99 | node CPU ms/state | Redis | Kafka | load |
|---|---|---|---|---|---|---|---|---|---|
${rows.map((r) => `| ${r.pass} | ${r.code} | ${r.round} | ${Math.round(r.perSecond)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.nodeMs.toFixed(3)} | ${r.redisMs.toFixed(3)} | ${r.kafkaMs.toFixed(3)} | ${r.load.toFixed(1)} |`).join('\n')}

## Machine

\`\`\`
${machine()}
redis: ${(await connection.redis.info('server')).match(/redis_version:(\S+)/)?.[1] ?? '?'} on 127.0.0.1 (same machine)
kafka: one local broker on 127.0.0.1 (same machine)
\`\`\``);
await admin.close();
await connection.close();
