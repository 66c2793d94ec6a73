import { parseTableState, tableKey, type TableId, type TableState } from '@icepack/types';
import type { Redis } from 'ioredis';

/** The last state this scanner published for a table, and what it was computed from. */
export interface StoredScan {
  readonly metadataLocation: string;
  /** The catalog's ETag of that load, for If-None-Match (absent when the server sends none). */
  readonly etag?: string;
  readonly state: TableState;
}

export interface TableStateStoreOptions {
  readonly redis: Redis;
  /** Key prefix, e.g. `icepack:scanner`. */
  readonly prefix: string;
  /** Entries kept in memory; older ones are read back from Redis. Default 50 000. */
  readonly maxInMemory?: number;
}

/**
 * Last published state per table: in memory for the incremental path, in Redis so a
 * restarted (or newly assigned) replica continues from what was published instead of
 * re-reading and re-publishing every table. One Redis hash per catalog.
 */
export class TableStateStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #max: number;
  readonly #memory = new Map<string, StoredScan>();

  constructor(options: TableStateStoreOptions) {
    this.#redis = options.redis;
    this.#prefix = options.prefix;
    this.#max = options.maxInMemory ?? 50_000;
  }

  async get(id: TableId): Promise<StoredScan | undefined> {
    const key = tableKey(id);
    const cached = this.#memory.get(key);
    if (cached !== undefined) return cached;
    const text = await this.#redis.hget(this.#hash(id.catalog), key);
    if (text === null) return undefined;
    const raw = JSON.parse(text) as { metadataLocation: string; etag?: string; state: unknown };
    const stored: StoredScan = {
      metadataLocation: raw.metadataLocation,
      ...(raw.etag === undefined ? {} : { etag: raw.etag }),
      state: parseTableState(raw.state),
    };
    this.#remember(key, stored);
    return stored;
  }

  async put(id: TableId, stored: StoredScan): Promise<void> {
    const key = tableKey(id);
    await this.#redis.hset(this.#hash(id.catalog), key, JSON.stringify(stored));
    this.#remember(key, stored);
  }

  async delete(id: TableId): Promise<void> {
    const key = tableKey(id);
    this.#memory.delete(key);
    await this.#redis.hdel(this.#hash(id.catalog), key);
  }

  #remember(key: string, stored: StoredScan): void {
    // Map order is insertion order: re-inserting makes this the newest entry.
    this.#memory.delete(key);
    this.#memory.set(key, stored);
    if (this.#memory.size > this.#max) {
      const oldest = this.#memory.keys().next().value;
      if (oldest !== undefined) this.#memory.delete(oldest);
    }
  }

  #hash(catalog: string): string {
    return `${this.#prefix}:state:${catalog}`;
  }
}
