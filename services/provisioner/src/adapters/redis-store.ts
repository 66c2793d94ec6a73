import type { Redis } from 'ioredis';
import type { CatalogRecord } from '../domain/catalog-record.ts';
import type { GroupRecord } from '../domain/group-record.ts';

// Creates a group only when its name is free and its catalog unbound, in one step, so two
// concurrent requests cannot bind one catalog twice. Returns 0 created, 1 name taken, 2 bound.
const CREATE_GROUP = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 1 end
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then return 2 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
return 0`;

// Writes a group only if it still exists: a slow reconcile must not resurrect a deleted group.
const SAVE_GROUP = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1`;

// Deletes a catalog unless a group binds it. Returns 0 deleted, 1 missing, 2 bound.
const DELETE_CATALOG = `
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 2 end
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 1 end
return 0`;

export const CreateGroupOutcome = { created: 0, nameTaken: 1, catalogBound: 2 } as const;
export type CreateGroupOutcome = (typeof CreateGroupOutcome)[keyof typeof CreateGroupOutcome];
export const DeleteCatalogOutcome = { deleted: 0, missing: 1, bound: 2 } as const;
export type DeleteCatalogOutcome = (typeof DeleteCatalogOutcome)[keyof typeof DeleteCatalogOutcome];

/**
 * The provisioner's state in Redis (AOF in production): catalogs and groups as JSON in
 * hashes, and catalog → group for the 1:1 rule. `prefix` keeps installations and tests apart.
 */
export class RedisStore {
  readonly #redis: Redis;
  readonly #catalogs: string;
  readonly #groups: string;
  readonly #bindings: string;

  constructor(redis: Redis, prefix = 'icepack:provisioner') {
    this.#redis = redis;
    this.#catalogs = `${prefix}:catalogs`;
    this.#groups = `${prefix}:groups`;
    this.#bindings = `${prefix}:catalog-groups`;
  }

  async getCatalog(name: string): Promise<CatalogRecord | undefined> {
    const text = await this.#redis.hget(this.#catalogs, name);
    return text === null ? undefined : (JSON.parse(text) as CatalogRecord);
  }

  async listCatalogs(): Promise<CatalogRecord[]> {
    const all = await this.#redis.hgetall(this.#catalogs);
    return Object.values(all)
      .map((text) => JSON.parse(text) as CatalogRecord)
      .sort((a, b) => a.catalog.name.localeCompare(b.catalog.name));
  }

  /** Creates (only if absent) and returns true, or false when the name is taken. */
  async createCatalog(record: CatalogRecord): Promise<boolean> {
    return (
      (await this.#redis.hsetnx(this.#catalogs, record.catalog.name, JSON.stringify(record))) === 1
    );
  }

  async saveCatalog(record: CatalogRecord): Promise<void> {
    await this.#redis.hset(this.#catalogs, record.catalog.name, JSON.stringify(record));
  }

  async deleteCatalog(name: string): Promise<DeleteCatalogOutcome> {
    return (await this.#redis.eval(
      DELETE_CATALOG,
      2,
      this.#catalogs,
      this.#bindings,
      name,
    )) as DeleteCatalogOutcome;
  }

  /** The group bound to `catalog`, if any. */
  async groupOfCatalog(catalog: string): Promise<string | undefined> {
    return (await this.#redis.hget(this.#bindings, catalog)) ?? undefined;
  }

  async getGroup(name: string): Promise<GroupRecord | undefined> {
    const text = await this.#redis.hget(this.#groups, name);
    return text === null ? undefined : (JSON.parse(text) as GroupRecord);
  }

  async listGroups(): Promise<GroupRecord[]> {
    const all = await this.#redis.hgetall(this.#groups);
    return Object.values(all)
      .map((text) => JSON.parse(text) as GroupRecord)
      .sort((a, b) => a.group.name.localeCompare(b.group.name));
  }

  async createGroup(record: GroupRecord): Promise<CreateGroupOutcome> {
    return (await this.#redis.eval(
      CREATE_GROUP,
      2,
      this.#groups,
      this.#bindings,
      record.group.name,
      record.group.catalog,
      JSON.stringify(record),
    )) as CreateGroupOutcome;
  }

  /** Saves the record; false when the group was deleted meanwhile (nothing written). */
  async saveGroup(record: GroupRecord): Promise<boolean> {
    return (
      (await this.#redis.eval(
        SAVE_GROUP,
        1,
        this.#groups,
        record.group.name,
        JSON.stringify(record),
      )) === 1
    );
  }

  /** Removes the group and frees its catalog. */
  async deleteGroup(record: GroupRecord): Promise<void> {
    await this.#redis
      .multi()
      .hdel(this.#groups, record.group.name)
      .hdel(this.#bindings, record.group.catalog)
      .exec();
  }
}
