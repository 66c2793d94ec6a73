import { randomUUID } from 'node:crypto';
import { sampleTableId, type TableId } from '@icepack/types';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { LastSucceededStore } from './adapters/last-succeeded.ts';
import { PLANNER_REDIS_OPTIONS } from './adapters/redis-options.ts';
import { TableStateStore } from './adapters/state-store.ts';
import { ScriptedTableReads, separateReads } from './adapters/table-reads.ts';
import { TaskQueue } from './adapters/task-queue.ts';
import { planTable } from './domain/plan.ts';
import { dayPartition, partitionedTableState } from './domain/state-fixtures.ts';
import { resolvePolicy } from '@icepack/policy';

const infra = inject('infra');
let redis: Redis;
beforeAll(async () => {
  redis = new Redis(infra.redisUrl, { maxRetriesPerRequest: null, ...PLANNER_REDIS_OPTIONS });
  await redis.ping();
});
afterAll(async () => {
  await redis.quit();
});
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
  cleanup.length = 0;
});

function setup() {
  const catalog = `r-${randomUUID().slice(0, 8)}`;
  const queue = new TaskQueue({ connection: redis });
  const states = new TableStateStore({
    connection: redis,
    statesKey: `test:${catalog}:states`,
    catalogsKey: `test:${catalog}:catalogs`,
  });
  const lastSucceeded = new LastSucceededStore({ connection: redis, key: `test:${catalog}:ok` });
  cleanup.push(async () => {
    await queue.queue(catalog).obliterate({ force: true });
    await queue.close();
    await states.clear();
    await lastSucceeded.clear();
  });
  const scripted = new ScriptedTableReads({ connection: redis, states, queue, lastSucceeded });
  const separate = separateReads(states, queue, lastSucceeded);
  /** Both reads of the table, which must agree. */
  const both = async (table: TableId) => {
    const [a, b] = await Promise.all([scripted.read(table), separate.read(table)]);
    expect(a).toEqual(b);
    return a;
  };
  return { catalog, queue, states, lastSucceeded, both };
}

describe('the planner reads a table in one script (issue 17 point 6)', () => {
  it('answers what the three reads on their own answer: nothing stored', async () => {
    const { catalog, both } = setup();
    const read = await both(sampleTableId({ catalog }));
    expect(read.latest).toBeUndefined();
    expect(read.record).toEqual({ succeeded: {}, failures: {} });
    expect(read.jobs.merge).toEqual({ state: 'missing' });
  });

  it('answers the stored head, the waiting tasks of every group and the outcomes', async () => {
    const { catalog, queue, states, lastSucceeded, both } = setup();
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
    const { catalog, states, both } = setup();
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
