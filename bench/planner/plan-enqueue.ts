// Table states planned and enqueued per second by one planner replica against real Redis.
// Run (with Redis up: bash deploy/local/infra.sh up redis):
//   node bench/planner/plan-enqueue.ts [tables] [in-flight]
// Kafka is left out on purpose: task events go to an in-memory sink, so the figure is the
// planner's own cost (state ordering, policy, rules, scores, BullMQ writes, state store).
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { createLogger, createRedisConnection } from '@icepack/runtime';
import { sampleTableId, type TableState } from '@icepack/types';
import {
  InMemoryTaskEventSink,
  Planner,
  TableStateStore,
  TaskQueue,
  tableState,
} from '@icepack/planner/testing';
import { machine } from '../iceberg/machine.ts';

const tables = Number(process.argv[2] ?? 10_000);
const inFlightList = (process.argv[3] ?? '1,16').split(',').map(Number);
const redisUrl = `redis://127.0.0.1:${process.env.ICEPACK_REDIS_PORT ?? '16379'}`;
const logger = createLogger({
  service: 'bench',
  level: 'warn',
  destination: new Writable({ write: (_c, _e, cb) => cb() }),
});

const connection = createRedisConnection(redisUrl, { role: 'client', logger });
const redis = connection.redis;

/** Runs `handle` over `items` with at most `inFlight` at once (like partitions consumed concurrently). */
async function pool<T>(
  items: readonly T[],
  inFlight: number,
  handle: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < items.length) await handle(items[next++]!);
    }),
  );
}

interface Round {
  readonly name: string;
  readonly states: number;
  readonly seconds: number;
  readonly perSecond: number;
}

async function bench(inFlight: number): Promise<Round[]> {
  const catalog = `bench-${randomUUID().slice(0, 8)}`;
  const queue = new TaskQueue({ connection: redis });
  const states = new TableStateStore({
    connection: redis,
    statesKey: `bench:${catalog}:states`,
    catalogsKey: `bench:${catalog}:catalogs`,
  });
  const events = new InMemoryTaskEventSink();
  const planner = new Planner({ queue, states, events, logger });
  const make = (seq: number, smallFiles: number): TableState[] =>
    Array.from({ length: tables }, (_, i) =>
      tableState(
        {
          snapshots: 60 + seq,
          smallFiles,
          positionDeleteFiles: 12,
          newDataFiles: 5,
          newDataShare: 0.1,
        },
        {
          table: sampleTableId({ catalog, namespace: ['db', `ns${i % 50}`], name: `t${i}` }),
          lastSequenceNumber: String(seq),
          metadataLocation: `s3://warehouse/db/t${i}/metadata/${seq}.metadata.json`,
          scannedAt: new Date(Date.UTC(2026, 0, 1, 0, seq)).toISOString(),
        },
      ),
    );
  const rounds: Round[] = [];
  const round = async (name: string, batch: readonly TableState[]) => {
    const start = process.hrtime.bigint();
    await pool(batch, inFlight, (s) => planner.handleState(s));
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    rounds.push({ name, states: batch.length, seconds, perSecond: batch.length / seconds });
  };
  try {
    await round('new tables (2 tasks created each)', make(1, 80));
    await round('newer states (2 waiting tasks updated each)', make(2, 120));
    const again = make(2, 120);
    await round('redelivered states (ignored)', again);
    const waiting = await queue.queue(catalog).getPrioritizedCount();
    if (waiting !== 2 * tables)
      throw new Error(`expected ${2 * tables} waiting tasks, found ${waiting}`);
  } finally {
    await queue.queue(catalog).obliterate({ force: true });
    await queue.close();
    await states.clear();
  }
  return rounds;
}

const lines: string[] = [];
for (const inFlight of inFlightList) {
  for (const r of await bench(inFlight)) {
    lines.push(
      `| ${inFlight} | ${r.name} | ${r.states} | ${r.seconds.toFixed(2)} | **${Math.round(r.perSecond)}** |`,
    );
  }
}
console.log(`# Planner: table states planned and enqueued per second (one replica, real Redis)

Command: \`node bench/planner/plan-enqueue.ts ${tables} ${inFlightList.join(',')}\`
Target: ≥ 2,000 states/s.

| in flight | round | states | seconds | states/s |
|---|---|---|---|---|
${lines.join('\n')}

## Machine

\`\`\`
${machine()}
redis: ${(await redis.info('server')).match(/redis_version:(\S+)/)?.[1] ?? '?'} on 127.0.0.1 (same machine)
\`\`\``);
await connection.close();
