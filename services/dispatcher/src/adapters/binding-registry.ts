import type { CatalogAccessPolicy, Logger, SparkSettingsPolicy } from '@icepack/runtime';
import {
  catalogAccessProblems,
  defaultCatalogAccessPolicy,
  defaultSparkSettingsPolicy,
  sparkSettingsProblems,
} from '@icepack/runtime';
import type { Binding, Catalog } from '@icepack/types';

/** What the registry starts per bound catalog (a `TaskWorker`). */
export interface CatalogWorker {
  start(): Promise<void>;
  /** Stops taking tasks and waits for running ones. */
  close(): Promise<void>;
}

export interface BindingRegistryOptions {
  readonly create: (binding: Binding, catalog: Catalog) => CatalogWorker;
  readonly logger: Logger;
  /** Only these catalogs (sharding dispatchers by catalog). Default: all. */
  readonly catalogs?: readonly string[];
  /**
   * Group Spark settings a binding may carry; a binding with others gets no worker (its tasks
   * wait in the queue). The provisioner refuses them at its API; this catches a forged
   * `BindingUpdated`. Default the runtime's default policy.
   */
  readonly sparkPolicy?: SparkSettingsPolicy;
  /**
   * Catalog addresses and secret sources a catalog may use; a catalog with others gets no
   * worker, so no job is launched at it with its credential. The provisioner refuses them at
   * its API; this catches a forged `CatalogDefined`. Default the runtime's default policy.
   */
  readonly accessPolicy?: CatalogAccessPolicy;
}

interface Entry {
  catalog?: Catalog;
  binding?: Binding;
  worker?: CatalogWorker;
  /** What the running worker was built from: a change restarts it. */
  shape?: string;
}

function shapeOf(binding: Binding, catalog: Catalog): string {
  // `updatedAt` alone changing (a re-publish) must not restart the worker.
  return JSON.stringify([{ ...binding, updatedAt: '' }, catalog.uri, catalog.warehouse ?? null]);
}

/**
 * Keeps one worker per ready binding whose catalog is known, from the compacted
 * `icepack.catalogs` and `icepack.bindings` topics. A draining or removed binding stops its
 * worker once the running tasks are done; a changed one (slots, runner, limits) restarts it.
 * Changes for one catalog are applied in order.
 */
export class BindingRegistry {
  readonly #o: BindingRegistryOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #chains = new Map<string, Promise<void>>();

  constructor(options: BindingRegistryOptions) {
    this.#o = options;
  }

  /** Catalogs with a running worker. */
  get active(): string[] {
    return [...this.#entries].filter(([, e]) => e.worker !== undefined).map(([name]) => name);
  }

  setCatalog(name: string, catalog: Catalog | undefined): Promise<void> {
    return this.#apply(name, (entry) => {
      entry.catalog = catalog;
    });
  }

  setBinding(name: string, binding: Binding | undefined): Promise<void> {
    return this.#apply(name, (entry) => {
      entry.binding = binding;
    });
  }

  async closeAll(): Promise<void> {
    await Promise.all(
      [...this.#entries.keys()].map((name) =>
        this.#apply(name, (e) => {
          e.binding = undefined;
        }),
      ),
    );
  }

  #apply(name: string, change: (entry: Entry) => void): Promise<void> {
    const previous = this.#chains.get(name) ?? Promise.resolve();
    const next = previous.then(async () => {
      const entry = this.#entries.get(name) ?? {};
      this.#entries.set(name, entry);
      change(entry);
      await this.#reconcile(name, entry);
    });
    this.#chains.set(
      name,
      next.catch(() => undefined),
    );
    return next;
  }

  async #reconcile(name: string, entry: Entry): Promise<void> {
    const allowed = this.#o.catalogs === undefined || this.#o.catalogs.includes(name);
    const { binding, catalog } = entry;
    const problems =
      binding === undefined
        ? []
        : sparkSettingsProblems(binding.spark, this.#o.sparkPolicy ?? defaultSparkSettingsPolicy);
    if (allowed && problems.length > 0) {
      this.#o.logger.error(
        { catalog: name, problems: problems.map((p) => `${p.path}: ${p.message}`) },
        'binding refused: its Spark settings are not allowed; no tasks run for this catalog',
      );
    }
    const catalogProblems =
      catalog === undefined
        ? []
        : catalogAccessProblems(catalog, this.#o.accessPolicy ?? defaultCatalogAccessPolicy);
    if (allowed && catalogProblems.length > 0) {
      this.#o.logger.error(
        { catalog: name, problems: catalogProblems.map((p) => `${p.path}: ${p.message}`) },
        'catalog refused: its addresses or secret sources are not allowed; no tasks run for it',
      );
    }
    const wanted =
      allowed &&
      problems.length === 0 &&
      catalogProblems.length === 0 &&
      binding?.state === 'ready' &&
      catalog !== undefined
        ? shapeOf(binding, catalog)
        : undefined;
    if (wanted === entry.shape) return;
    if (entry.worker !== undefined) {
      this.#o.logger.info(
        { catalog: name },
        'stopping the catalog worker (binding changed or gone)',
      );
      await entry.worker.close();
      entry.worker = undefined;
      entry.shape = undefined;
    }
    if (wanted !== undefined && binding !== undefined && catalog !== undefined) {
      const worker = this.#o.create(binding, catalog);
      await worker.start();
      entry.worker = worker;
      entry.shape = wanted;
      this.#o.logger.info(
        { catalog: name, slots: binding.slots, runner: binding.runner },
        'catalog worker started',
      );
    }
  }
}
