import type { Logger } from 'pino';
import type { CatalogHealth } from '../domain/catalog-health.ts';
import type { CatalogRegistry } from '../domain/catalog-registry.ts';
import type { CatalogClients } from './catalog-clients.ts';

/**
 * After a catalog failed, asks it one cheap question (list top-level namespaces) when its
 * backoff ends, so `/readyz` turns healthy again even when no scan request is waiting.
 */
export class CatalogProber {
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #health: CatalogHealth;
  readonly #registry: CatalogRegistry;
  readonly #clients: CatalogClients;
  readonly #logger: Logger;
  #stopped = false;

  constructor(
    health: CatalogHealth,
    registry: CatalogRegistry,
    clients: CatalogClients,
    logger: Logger,
  ) {
    this.#health = health;
    this.#registry = registry;
    this.#clients = clients;
    this.#logger = logger;
  }

  schedule(name: string): void {
    if (this.#stopped || this.#timers.has(name)) return;
    const timer = setTimeout(
      () => {
        this.#timers.delete(name);
        void this.#probe(name);
      },
      Math.max(100, this.#health.holdOffMs(name)),
    );
    timer.unref();
    this.#timers.set(name, timer);
  }

  stop(): void {
    this.#stopped = true;
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }

  async #probe(name: string): Promise<void> {
    const catalog = this.#registry.active(name);
    if (catalog === undefined) {
      this.#health.forget(name);
      return;
    }
    if (!this.#health.isDown(name)) return;
    try {
      await this.#clients.get(catalog).listNamespaces([]);
      if (this.#health.succeeded(name))
        this.#logger.info({ catalog: name }, 'catalog reachable again');
    } catch (error) {
      const delayMs = this.#health.failed(name, (error as Error).message);
      this.#logger.warn({ catalog: name, err: error, delayMs }, 'catalog still failing');
      this.schedule(name);
    }
  }
}
