import type { Redis } from 'ioredis';

const CHUNK = 1_000;

/**
 * The tables the last complete discovery walk of a catalog found (a Redis set of table
 * keys), shared by replicas: the next walk tombstones those it no longer finds.
 */
export class KnownTablesStore {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  async members(catalog: string): Promise<string[]> {
    return this.#redis.smembers(this.#key(catalog));
  }

  /** Replaces the set atomically (readers see the old or the new set, never half). */
  async replace(catalog: string, keys: readonly string[]): Promise<void> {
    const key = this.#key(catalog);
    const staging = `${key}:staging`;
    const multi = this.#redis.multi().del(staging);
    for (let i = 0; i < keys.length; i += CHUNK) multi.sadd(staging, ...keys.slice(i, i + CHUNK));
    multi.del(key);
    if (keys.length > 0) multi.rename(staging, key);
    const results = await multi.exec();
    const failed = results?.find(([error]) => error !== null);
    if (failed !== undefined) throw failed[0] as Error;
  }

  async remove(catalog: string, tableKey: string): Promise<void> {
    await this.#redis.srem(this.#key(catalog), tableKey);
  }

  #key(catalog: string): string {
    return `${this.#prefix}:tables:${catalog}`;
  }
}
