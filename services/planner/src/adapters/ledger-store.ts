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
 * The ledger in Redis (decision 0015): one sorted set per catalog, score = the run's end
 * (`at`, epoch ms), member = the entry's JSON — a redelivered event writes the same member
 * again, so it is counted once. Every write trims the set to the bounds (`ledgerTrim`).
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

  /** Adds the entry of a run of `catalog` and trims that catalog's entries to the bounds. */
  async record(catalog: string, entry: LedgerEntry): Promise<void> {
    const key = this.#key(catalog);
    const { keepFromMs, keepNewest } = ledgerTrim(this.#now(), this.bounds);
    await this.#redis
      .multi()
      .zadd(key, Date.parse(entry.at), JSON.stringify(entry))
      .zremrangebyscore(key, '-inf', `(${String(keepFromMs)}`)
      .zremrangebyrank(key, 0, -(keepNewest + 1))
      .exec();
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

  /** Removes a catalog's entries (tests). */
  async clear(catalog: string): Promise<void> {
    await this.#redis.del(this.#key(catalog));
  }
}
