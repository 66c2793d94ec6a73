import type { Catalog } from '@icepack/types';
import { parseCatalog, ValidationError } from '@icepack/types';
import { catalogPolicyIssues } from '@icepack/policy';
import { catalogAccessProblems } from '@icepack/runtime';
import type { CatalogAccessPolicy, Logger } from '@icepack/runtime';
import type { CatalogProbe } from '../adapters/catalog-probe.ts';
import type { Publisher } from '../adapters/publisher.ts';
import type { RedisStore } from '../adapters/redis-store.ts';
import { DeleteCatalogOutcome } from '../adapters/redis-store.ts';
import type { CatalogRecord, CatalogView } from '../domain/catalog-record.ts';
import { catalogView } from '../domain/catalog-record.ts';
import { ConflictError, NotFoundError } from '../domain/errors.ts';
import { catalogSparkDefaultsProblems } from '../domain/spark-defaults.ts';
import type { Clock } from './clock.ts';

export interface CatalogServiceDeps {
  readonly store: RedisStore;
  readonly publisher: Publisher;
  readonly probe: CatalogProbe;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Allowed secret sources and catalog addresses; a definition outside them is a 400. */
  readonly access: CatalogAccessPolicy;
  /** Called after a bound catalog changed, so its group's ConfigMap follows. */
  readonly onCatalogChanged: (name: string) => Promise<void>;
}

/** Catalogs: persisted first, then published on `icepack.catalogs` (retried by reconcile). */
export class CatalogService {
  readonly #deps: CatalogServiceDeps;

  constructor(deps: CatalogServiceDeps) {
    this.#deps = deps;
  }

  async list(): Promise<CatalogView[]> {
    const records = await this.#deps.store.listCatalogs();
    return Promise.all(records.map((record) => this.#view(record)));
  }

  async get(name: string): Promise<CatalogView> {
    return this.#view(await this.#record(name));
  }

  async create(body: unknown): Promise<CatalogView> {
    const catalog = this.#parse(body);
    const { store, probe, clock } = this.#deps;
    if ((await store.getCatalog(catalog.name)) !== undefined) {
      throw new ConflictError(`catalog "${catalog.name}" already exists`);
    }
    const now = clock().toISOString();
    const record: CatalogRecord = {
      catalog,
      connectivity: await probe(catalog),
      published: false,
      createdAt: now,
      updatedAt: now,
    };
    if (!(await store.createCatalog(record)))
      throw new ConflictError(`catalog "${catalog.name}" already exists`);
    return this.#view(await this.#publish(record));
  }

  /** Creates or replaces (the bootstrap file's upsert). */
  async upsert(catalog: Catalog): Promise<CatalogView> {
    const existing = await this.#deps.store.getCatalog(catalog.name);
    return existing === undefined ? this.create(catalog) : this.update(catalog.name, catalog);
  }

  async update(name: string, body: unknown): Promise<CatalogView> {
    const withName =
      typeof body === 'object' && body !== null && !('name' in body) ? { ...body, name } : body;
    const catalog = this.#parse(withName);
    if (catalog.name !== name) {
      throw new ValidationError('catalog', [
        {
          path: 'name',
          message: `must match the URL (${name}); a catalog cannot be renamed`,
          code: 'custom',
        },
      ]);
    }
    const { store, probe, clock } = this.#deps;
    const existing = await this.#record(name);
    const record: CatalogRecord = {
      ...existing,
      catalog,
      connectivity: await probe(catalog),
      published: false,
      updatedAt: clock().toISOString(),
    };
    await store.saveCatalog(record);
    const published = await this.#publish(record);
    if ((await store.groupOfCatalog(name)) !== undefined) await this.#deps.onCatalogChanged(name);
    return this.#view(published);
  }

  async delete(name: string): Promise<void> {
    const { store, publisher } = this.#deps;
    const outcome = await store.deleteCatalog(name);
    if (outcome === DeleteCatalogOutcome.missing)
      throw new NotFoundError(`catalog "${name}" not found`);
    if (outcome === DeleteCatalogOutcome.bound) {
      const group = await store.groupOfCatalog(name);
      throw new ConflictError(
        `catalog "${name}" is bound to resource group "${group ?? '?'}"; delete the group first`,
      );
    }
    await publisher.tombstoneCatalog(name);
  }

  /** Publishes catalogs whose publication failed earlier (reconcile). */
  async republishPending(): Promise<void> {
    for (const record of await this.#deps.store.listCatalogs()) {
      if (!record.published) await this.#publish(record);
    }
  }

  /**
   * Validates the body, then refuses what the access policy does not allow, a maintenance
   * policy with an unknown key or an unreadable value, and what the group's
   * `spark-defaults.conf` could not carry (400 naming the field).
   */
  #parse(body: unknown): Catalog {
    const catalog = parseCatalog(body);
    const problems = [
      ...catalogAccessProblems(catalog, this.#deps.access),
      ...catalogPolicyIssues(catalog.policy),
      ...catalogSparkDefaultsProblems(catalog),
    ];
    if (problems.length > 0) {
      throw new ValidationError(
        'catalog',
        problems.map((p) => ({ ...p, code: 'custom' })),
      );
    }
    return catalog;
  }

  async #record(name: string): Promise<CatalogRecord> {
    const record = await this.#deps.store.getCatalog(name);
    if (record === undefined) throw new NotFoundError(`catalog "${name}" not found`);
    return record;
  }

  async #publish(record: CatalogRecord): Promise<CatalogRecord> {
    try {
      await this.#deps.publisher.publishCatalog(record.catalog);
    } catch (error) {
      this.#deps.logger.warn(
        { err: error, catalog: record.catalog.name },
        'publishing the catalog failed; the reconcile loop retries',
      );
      return record;
    }
    const published = { ...record, published: true };
    await this.#deps.store.saveCatalog(published);
    return published;
  }

  async #view(record: CatalogRecord): Promise<CatalogView> {
    return catalogView(record, await this.#deps.store.groupOfCatalog(record.catalog.name));
  }
}
