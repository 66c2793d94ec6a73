import { tableKey, TaskType, type TableId } from '@icepack/types';
import type { Redis } from 'ioredis';
import type { LastMaintenance } from '../domain/last-maintenance.ts';

export interface LastSucceededStoreOptions {
  /** Shared ioredis connection. Required. */
  readonly connection: Redis;
  /** Hash: `<type>/<table key>` → epoch ms of the last success. Default `icepack:planner:last-succeeded`. */
  readonly key?: string;
}

// Keeps the later time: events are at least once and one table's may arrive out of order.
const RECORD_LATER = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current and tonumber(current) >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
`;

const TYPES = Object.values(TaskType);
/** A recorded time (epoch ms, as stored) as ISO-8601. */
const iso = (ms: string): string => new Date(Number(ms)).toISOString();

/**
 * When each task type last succeeded on each table, from the `succeeded` task events: the
 * one record of it (decision 0005). The rules read it as `state.lastMaintenance`.
 */
export class LastSucceededStore {
  readonly #redis: Redis;
  readonly #key: string;

  constructor(options: LastSucceededStoreOptions) {
    this.#redis = options.connection;
    this.#key = options.key ?? 'icepack:planner:last-succeeded';
  }

  /** Records a success at `at`; true when it is later than the one recorded. */
  async record(table: TableId, type: TaskType, at: string): Promise<boolean> {
    const ms = Date.parse(at);
    const changed = await this.#redis.eval(
      RECORD_LATER,
      1,
      this.#key,
      `${type}/${tableKey(table)}`,
      String(ms),
    );
    return changed === 1;
  }

  /** The record of one table (by table key). */
  async get(key: string): Promise<LastMaintenance> {
    const values = await this.#redis.hmget(this.#key, ...TYPES.map((t) => `${t}/${key}`));
    const record: Partial<Record<TaskType, string>> = {};
    TYPES.forEach((type, i) => {
      const ms = values[i];
      if (ms !== null && ms !== undefined) record[type] = iso(ms);
    });
    return record;
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
    await this.#redis.hdel(this.#key, ...TYPES.map((t) => `${t}/${key}`));
  }

  /** Removes the hash (tests). */
  async clear(): Promise<void> {
    await this.#redis.del(this.#key);
  }
}
