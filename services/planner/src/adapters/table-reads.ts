import { tableKey, type TableId } from '@icepack/types';
import type { Redis } from 'ioredis';
import { RedisScript } from '@icepack/runtime';
import {
  fieldsOf,
  outcomesFrom,
  type LastSucceededStore,
  type TableOutcomes,
} from './last-succeeded.ts';
import { Coalescer } from './coalescer.ts';
import { INSPECT_JOBS_LUA } from './queue-scripts.ts';
import { fromStored, type TableStateHead, type TableStateStore } from './state-store.ts';
import { jobsFrom, type TableJobs, type TaskQueue } from './task-queue.ts';

/** What the planner reads of a table before it plans a state of it. */
export interface TableRead {
  /** The stored state's head (a state stored before heads were: whole); none stored: undefined. */
  readonly latest: TableStateHead | undefined;
  /** The table's jobs (`TaskQueue.inspect`). */
  readonly jobs: TableJobs;
  /** Its task outcomes (`LastSucceededStore.outcomes`). */
  readonly record: TableOutcomes;
}

export interface TableReads {
  read(table: TableId): Promise<TableRead>;
}

/** The three reads on their own, in flight together (stores that are not on one Redis: tests). */
export function separateReads(
  states: Pick<TableStateStore, 'head'>,
  queue: Pick<TaskQueue, 'inspect'>,
  lastSucceeded: Pick<LastSucceededStore, 'outcomes'>,
): TableReads {
  return {
    read: async (table) => {
      const key = tableKey(table);
      const [latest, jobs, record] = await Promise.all([
        states.head(key),
        queue.inspect(table),
        lastSucceeded.outcomes(key),
      ]);
      return { latest, jobs, record };
    },
  };
}

// KEYS[1] heads, KEYS[2] states, KEYS[3] succeeded, KEYS[4] failures. ARGV[1] the number of
// tables, then per table: its key, its queue key prefix, n, k, its n outcome fields, its k job
// ids. Answers per table, one after the other: the head (or ''), the whole state when there is
// no head (or ''), the n success times, the n failure streaks ('' for none), then the k jobs
// (two values each).
const READ_TABLES = new RedisScript(`${INSPECT_JOBS_LUA}
local out = {}
local a = 2
for _ = 1, tonumber(ARGV[1]) do
  local key, base = ARGV[a], ARGV[a + 1]
  local n, k = tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  local head = redis.call('HGET', KEYS[1], key)
  if head then
    out[#out + 1] = head
    out[#out + 1] = ''
  else
    out[#out + 1] = ''
    out[#out + 1] = redis.call('HGET', KEYS[2], key) or ''
  end
  local fields = {}
  for i = 1, n do fields[i] = ARGV[a + 3 + i] end
  local ok = redis.call('HMGET', KEYS[3], unpack(fields))
  local failed = redis.call('HMGET', KEYS[4], unpack(fields))
  for i = 1, n do out[#out + 1] = ok[i] or '' end
  for i = 1, n do out[#out + 1] = failed[i] or '' end
  inspect(base, a + 4 + n, out, a + 3 + n + k)
  a = a + 4 + n + k
end
return out
`);

/** One table's read from its part of a READ_TABLES reply (`n` outcome fields). */
function readFrom(reply: readonly string[], n: number): TableRead {
  const [head = '', whole = ''] = reply;
  const value = (v: string | undefined) => (v === '' || v === undefined ? null : v);
  return {
    latest:
      head !== ''
        ? (JSON.parse(head) as TableStateHead)
        : whole !== ''
          ? (fromStored(whole) as TableStateHead)
          : undefined,
    record: outcomesFrom(
      reply.slice(2, 2 + n).map(value),
      reply.slice(2 + n, 2 + 2 * n).map(value),
    ),
    jobs: jobsFrom(reply.slice(2 + 2 * n)),
  };
}

export interface ScriptedTableReadsOptions {
  /** The Redis all three stores are on. */
  readonly connection: Redis;
  readonly states: Pick<TableStateStore, 'keys'>;
  readonly queue: Pick<TaskQueue, 'inspectArgs'>;
  readonly lastSucceeded: Pick<LastSucceededStore, 'keys'>;
}

/**
 * The three reads in one script: one command and one reply per state, not four (the head, the
 * jobs, and the two hashes of outcomes; issue 17 point 6), and the reads of the states handled
 * in one turn in one command ({@link Coalescer}). Atomic per table, which the reads on their
 * own were not (nothing relied on that). Answers what {@link separateReads} answers.
 */
export class ScriptedTableReads implements TableReads {
  readonly #o: ScriptedTableReadsOptions;
  readonly #reads = new Coalescer<TableId, TableRead>((tables) => this.#readMany(tables));

  constructor(options: ScriptedTableReadsOptions) {
    this.#o = options;
  }

  read(table: TableId): Promise<TableRead> {
    return this.#reads.call(table);
  }

  async #readMany(tables: readonly TableId[]): Promise<TableRead[]> {
    const { states, heads } = this.#o.states.keys;
    const { succeeded, failures } = this.#o.lastSucceeded.keys;
    const args: (string | number)[] = [tables.length];
    const sizes: [n: number, k: number][] = [];
    for (const table of tables) {
      const key = tableKey(table);
      const { base, ids } = this.#o.queue.inspectArgs(table);
      const fields = fieldsOf(key);
      args.push(key, base, fields.length, ids.length, ...fields, ...ids);
      sizes.push([fields.length, ids.length]);
    }
    const reply = (await READ_TABLES.run(
      this.#o.connection,
      [heads, states, succeeded, failures],
      args,
    )) as string[];
    let at = 0;
    return sizes.map(([n, k]) => {
      const size = 2 + 2 * n + 2 * k;
      const read = readFrom(reply.slice(at, at + size), n);
      at += size;
      return read;
    });
  }
}
