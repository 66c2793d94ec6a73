import { createHash } from 'node:crypto';
import { RedisScript } from '@icepack/runtime';
import type { Redis } from 'ioredis';
import {
  DEFAULT_LEDGER_BOUNDS,
  ledgerTrim,
  type LedgerBounds,
  type LedgerEntry,
} from '../domain/ledger.ts';

export interface LedgerStoreOptions {
  /** Shared ioredis connection. Required. */
  readonly connection: Redis;
  /** Key prefix; a catalog's entries are `<prefix>:<catalog>`. Default `icepack:planner:ledger`. */
  readonly prefix?: string;
  readonly bounds?: LedgerBounds;
  /** Default `Date.now`. */
  readonly now?: () => number;
}

/**
 * Adds a ledger entry unless its run has one: KEYS[1] the catalog's sorted set, KEYS[2] the
 * run's marker (`SET NX` with the retention as its life); ARGV: the entry's end (score), its
 * JSON, whether to check the marker (`1`: the entry names its run), the marker's life (ms),
 * and the bounds to trim to (`ledgerTrim`). 1 when added, 0 when the run was recorded before.
 */
const RECORD = new RedisScript(`
if ARGV[3] == '1' and not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[5])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[6]) + 1))
return 1
`);

/**
 * The ledger in Redis (decision 0015): one sorted set per catalog, score = the run's end
 * (`at`, epoch ms), member = the entry's JSON. **One entry per run** (and one per resident
 * session's idle tail, marked apart from its leader's run, ADR 0046): a run's end may be
 * reported more than once — a redelivered event (the same JSON, the same member) or a
 * dispatcher that restarted and reported the run again (events are at least once; a later
 * `at`, its `after` figures read again) — and only the first report is kept, by a marker per
 * task and run id that lives as long as the ledger keeps entries. An entry without a run id
 * (dispatchers older than it) is told apart by its JSON only. Every write trims the set to
 * the bounds (`ledgerTrim`).
 */
export class LedgerStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #now: () => number;
  readonly bounds: LedgerBounds;

  constructor(options: LedgerStoreOptions) {
    this.#redis = options.connection;
    this.#prefix = options.prefix ?? 'icepack:planner:ledger';
    this.bounds = options.bounds ?? DEFAULT_LEDGER_BOUNDS;
    this.#now = options.now ?? Date.now;
  }

  #key(catalog: string): string {
    return `${this.#prefix}:${catalog}`;
  }

  /**
   * A run's marker key: under the catalog, the task and run ids hashed (any length); a
   * session's idle tail (ADR 0046) has its own, beside its leader's run.
   */
  #runKey(catalog: string, entry: LedgerEntry): string {
    const tail = entry.kind === undefined || entry.kind === 'run' ? '' : `\u0000${entry.kind}`;
    const run = createHash('sha1').update(`${entry.taskId}\u0000${entry.runId ?? ''}${tail}`);
    return `${this.#key(catalog)}:run:${run.digest('hex')}`;
  }

  /**
   * Adds the entry of a run of `catalog` unless that run has one, and trims the catalog's
   * entries to the bounds; false when the run was recorded before.
   */
  async record(catalog: string, entry: LedgerEntry): Promise<boolean> {
    const { keepFromMs, keepNewest } = ledgerTrim(this.#now(), this.bounds);
    const added = await RECORD.run(
      this.#redis,
      [this.#key(catalog), this.#runKey(catalog, entry)],
      [
        Date.parse(entry.at),
        JSON.stringify(entry),
        entry.runId === undefined ? '0' : '1',
        this.bounds.retentionMs,
        keepFromMs,
        keepNewest,
      ],
    );
    return added === 1;
  }

  /** The catalog's entries with `at` in [sinceMs, untilMs], oldest first. */
  async range(catalog: string, sinceMs: number, untilMs: number): Promise<LedgerEntry[]> {
    const members = await this.#redis.zrangebyscore(
      this.#key(catalog),
      String(sinceMs),
      String(untilMs),
    );
    return members.map((m) => JSON.parse(m) as LedgerEntry);
  }

  /** Entries kept for the catalog (tests, bounds). */
  async size(catalog: string): Promise<number> {
    return this.#redis.zcard(this.#key(catalog));
  }

  /** Removes a catalog's entries and run markers (tests). */
  async clear(catalog: string): Promise<void> {
    const markers: string[] = [];
    const match = `${this.#key(catalog)}:run:*`;
    let cursor = '0';
    do {
      const [next, keys] = await this.#redis.scan(cursor, 'MATCH', match, 'COUNT', 1000);
      markers.push(...keys);
      cursor = next;
    } while (cursor !== '0');
    await this.#redis.del(this.#key(catalog), ...markers);
  }
}
