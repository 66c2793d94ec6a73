import { tableKey, TaskType, type TableId } from '@icepack/types';
import type { Redis } from 'ioredis';
import type { LastMaintenance } from '../domain/last-maintenance.ts';
import type { FailureStreak, FailureStreaks } from '../domain/back-off.ts';

export interface LastSucceededStoreOptions {
  /** Shared ioredis connection. Required. */
  readonly connection: Redis;
  /** Hash: `<type>/<table key>` → epoch ms of the last success. Default `icepack:planner:last-succeeded`. */
  readonly key?: string;
  /**
   * Hash: `<type>/<table key>` → the failures since the last success (JSON `{n, at, kind}`).
   * Default `icepack:planner:task-failures`, or `<key>:failures` when `key` is given (tests).
   */
  readonly failuresKey?: string;
}

// Keeps the later time: events are at least once and one table's may arrive out of order.
// A success ends the failure streak that came before it (not one that came after it).
const RECORD_LATER = `
local failed = redis.call('HGET', KEYS[2], ARGV[1])
if failed and tonumber(cjson.decode(failed).at) <= tonumber(ARGV[2]) then
  redis.call('HDEL', KEYS[2], ARGV[1])
end
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current and tonumber(current) >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
`;

// Counts a failure once: a redelivered event (same time) or one older than the last counted
// failure or the last success changes nothing. Answers the streak's length, 0 when ignored.
const RECORD_FAILURE = `
local at = tonumber(ARGV[2])
local ok = redis.call('HGET', KEYS[1], ARGV[1])
if ok and tonumber(ok) >= at then return 0 end
local n = 0
local current = redis.call('HGET', KEYS[2], ARGV[1])
if current then
  local c = cjson.decode(current)
  if tonumber(c.at) >= at then return 0 end
  n = tonumber(c.n)
end
local record = {n = n + 1, at = ARGV[2]}
if ARGV[3] ~= '' then record.kind = ARGV[3] end
redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(record))
return n + 1
`;

interface StoredFailure {
  readonly n: number;
  readonly at: string;
  readonly kind?: string;
}

const TYPES = Object.values(TaskType);
/** A recorded time (epoch ms, as stored) as ISO-8601. */
const iso = (ms: string): string => new Date(Number(ms)).toISOString();
/** A table's fields in both hashes, one per type (in `TYPES` order). */
export const fieldsOf = (key: string): string[] => TYPES.map((t) => `${t}/${key}`);

/** What the planner recorded of a table's task outcomes. */
export interface TableOutcomes {
  readonly succeeded: LastMaintenance;
  readonly failures: FailureStreaks;
}

function recordOf(values: readonly (string | null | undefined)[]): LastMaintenance {
  const record: Partial<Record<TaskType, string>> = {};
  TYPES.forEach((type, i) => {
    const ms = values[i];
    if (ms !== null && ms !== undefined) record[type] = iso(ms);
  });
  return record;
}

function streaksOf(values: readonly (string | null | undefined)[]): FailureStreaks {
  const streaks: Partial<Record<TaskType, FailureStreak>> = {};
  TYPES.forEach((type, i) => {
    const raw = values[i];
    if (raw === null || raw === undefined) return;
    const stored = JSON.parse(raw) as StoredFailure;
    streaks[type] = {
      count: stored.n,
      lastFailedAt: iso(stored.at),
      ...(stored.kind === undefined ? {} : { kind: stored.kind }),
    };
  });
  return streaks;
}

/** A table's outcomes from its {@link fieldsOf} values in the two hashes (missing: null). */
export function outcomesFrom(
  succeeded: readonly (string | null | undefined)[],
  failures: readonly (string | null | undefined)[],
): TableOutcomes {
  return { succeeded: recordOf(succeeded), failures: streaksOf(failures) };
}

/**
 * What each task type's outcomes on each table were, from the task events: when it last
 * succeeded (`succeeded`, decision 0005; the rules read it as `state.lastMaintenance`) and
 * how many times in a row it failed since (`failed`, the back-off of ADR 0028). The one
 * record of both, so a success clears the streak in the same step that records it.
 */
export class LastSucceededStore {
  readonly #redis: Redis;
  readonly #key: string;
  readonly #failuresKey: string;

  constructor(options: LastSucceededStoreOptions) {
    this.#redis = options.connection;
    this.#key = options.key ?? 'icepack:planner:last-succeeded';
    this.#failuresKey =
      options.failuresKey ??
      (options.key === undefined ? 'icepack:planner:task-failures' : `${options.key}:failures`);
  }

  /** Its two hashes: when each type last succeeded, and the failures since. */
  get keys(): { readonly succeeded: string; readonly failures: string } {
    return { succeeded: this.#key, failures: this.#failuresKey };
  }

  /** Records a success at `at` (ending the failures before it); true when it is later than the one recorded. */
  async record(table: TableId, type: TaskType, at: string): Promise<boolean> {
    const ms = Date.parse(at);
    const changed = await this.#redis.eval(
      RECORD_LATER,
      2,
      this.#key,
      this.#failuresKey,
      `${type}/${tableKey(table)}`,
      String(ms),
    );
    return changed === 1;
  }

  /**
   * Records that a task of `type` gave up on the table at `at` (`failed`): the length of the
   * streak now, 0 when the event was already counted or is older than the last success.
   */
  async recordFailure(
    table: TableId,
    type: TaskType,
    at: string,
    kind: string | undefined,
  ): Promise<number> {
    const count = await this.#redis.eval(
      RECORD_FAILURE,
      2,
      this.#key,
      this.#failuresKey,
      `${type}/${tableKey(table)}`,
      String(Date.parse(at)),
      kind ?? '',
    );
    return Number(count);
  }

  /** The failure streaks of one table (by table key), per type. */
  async failures(key: string): Promise<FailureStreaks> {
    return streaksOf(await this.#redis.hmget(this.#failuresKey, ...fieldsOf(key)));
  }

  /** The record of one table (by table key). */
  async get(key: string): Promise<LastMaintenance> {
    return recordOf(await this.#redis.hmget(this.#key, ...fieldsOf(key)));
  }

  /**
   * Both of one table ({@link get} and {@link failures}), as the planner reads them per state:
   * the two reads go out together (one round trip). Not an ioredis pipeline: building one
   * copies every script BullMQ defined on the shared connection, which costs more than it saves.
   */
  async outcomes(key: string): Promise<TableOutcomes> {
    const [succeeded, failures] = await Promise.all([this.get(key), this.failures(key)]);
    return { succeeded, failures };
  }

  /** Every table's record, by table key (HSCAN in batches of `count`). */
  async all(count = 1_000): Promise<Map<string, LastMaintenance>> {
    const records = new Map<string, Partial<Record<TaskType, string>>>();
    let cursor = '0';
    do {
      const [next, flat] = await this.#redis.hscan(this.#key, cursor, 'COUNT', count);
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const field = flat[i]!;
        const slash = field.indexOf('/');
        const type = field.slice(0, slash) as TaskType;
        if (!TYPES.includes(type)) continue;
        const key = field.slice(slash + 1);
        const record = records.get(key) ?? {};
        record[type] = iso(flat[i + 1]!);
        records.set(key, record);
      }
      cursor = next;
    } while (cursor !== '0');
    return records;
  }

  /** Forgets a dropped table (a table re-created under its name starts afresh). */
  async delete(key: string): Promise<void> {
    const fields = fieldsOf(key);
    await Promise.all([
      this.#redis.hdel(this.#key, ...fields),
      this.#redis.hdel(this.#failuresKey, ...fields),
    ]);
  }

  /** Removes the hashes (tests). */
  async clear(): Promise<void> {
    await this.#redis.del(this.#key, this.#failuresKey);
  }
}
