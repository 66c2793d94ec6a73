import { tableKey, type TableId } from '@icepack/types';
import type { Redis } from 'ioredis';
import { RedisScript } from '@icepack/runtime';
import {
  fieldsOf,
  outcomesFrom,
  type LastSucceededStore,
  type TableOutcomes,
} from './last-succeeded.ts';
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

// KEYS[1] heads, KEYS[2] states, KEYS[3] succeeded, KEYS[4] failures.
// ARGV[1] table key, ARGV[2] queue key prefix, ARGV[3] n, ARGV[4..3+n] the table's outcome
// fields, ARGV[4+n..] its job ids. Answers the head (or ''), the whole state when there is no
// head (or ''), the n success times, the n failure streaks ('' for none), then the jobs.
const READ_TABLE = new RedisScript(`${INSPECT_JOBS_LUA}
local out = {}
local head = redis.call('HGET', KEYS[1], ARGV[1])
if head then
  out[1] = head
  out[2] = ''
else
  out[1] = ''
  out[2] = redis.call('HGET', KEYS[2], ARGV[1]) or ''
end
local n = tonumber(ARGV[3])
local fields = {}
for i = 1, n do fields[i] = ARGV[3 + i] end
local ok = redis.call('HMGET', KEYS[3], unpack(fields))
local failed = redis.call('HMGET', KEYS[4], unpack(fields))
for i = 1, n do out[#out + 1] = ok[i] or '' end
for i = 1, n do out[#out + 1] = failed[i] or '' end
inspect(ARGV[2], 4 + n, out)
return out
`);

export interface ScriptedTableReadsOptions {
  /** The Redis all three stores are on. */
  readonly connection: Redis;
  readonly states: Pick<TableStateStore, 'keys'>;
  readonly queue: Pick<TaskQueue, 'inspectArgs'>;
  readonly lastSucceeded: Pick<LastSucceededStore, 'keys'>;
}

/**
 * The three reads in one script: one command and one reply per state, not four (the head, the
 * jobs, and the two hashes of outcomes; issue 17 point 6). Atomic, which the reads on their
 * own were not (nothing relied on that). Answers what {@link separateReads} answers.
 */
export class ScriptedTableReads implements TableReads {
  readonly #o: ScriptedTableReadsOptions;

  constructor(options: ScriptedTableReadsOptions) {
    this.#o = options;
  }

  async read(table: TableId): Promise<TableRead> {
    const key = tableKey(table);
    const { states, heads } = this.#o.states.keys;
    const { succeeded, failures } = this.#o.lastSucceeded.keys;
    const { base, ids } = this.#o.queue.inspectArgs(table);
    const fields = fieldsOf(key);
    const reply = (await READ_TABLE.run(
      this.#o.connection,
      [heads, states, succeeded, failures],
      [key, base, fields.length, ...fields, ...ids],
    )) as string[];
    const [head = '', whole = ''] = reply;
    const n = fields.length;
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
}
