import type { Catalog } from '@icepack/types';
import type { CatalogRegistry } from './catalog-registry.ts';

/**
 * Shares catch-ups of the control plane (the catalogs and bindings topics) among callers,
 * without ever answering a caller with a catch-up that began before it asked: a caller's
 * work (a discovery job, a scan request) was produced after whatever it depends on was
 * published, so only a catch-up measured from a later moment covers it. At most one
 * catch-up runs at a time; callers that arrive while one runs share the next.
 */
export class CatchUpGate {
  readonly #run: () => Promise<void>;
  #asked = 0;
  #covered = 0;
  #running: Promise<void> | undefined;

  constructor(run: () => Promise<void>) {
    this.#run = run;
  }

  /** Resolves once a catch-up that started after this call has finished. */
  async current(): Promise<void> {
    const ticket = ++this.#asked;
    while (this.#covered < ticket) {
      this.#running ??= this.#start();
      await this.#running;
    }
  }

  async #start(): Promise<void> {
    // Callers of this same turn of the event loop share the catch-up about to start.
    await new Promise((resolve) => setImmediate(resolve));
    const covers = this.#asked;
    try {
      await this.#run();
    } finally {
      // A failed catch-up still ends the wait: the caller re-checks and decides.
      this.#covered = Math.max(this.#covered, covers);
      this.#running = undefined;
    }
  }
}

/**
 * The catalog when it is active here, asking the control plane to catch up first when it
 * is not: another replica may have applied a new binding (and produced work for it) before
 * this one read it. Still inactive after the catch-up means really not bound or defined.
 */
export async function activeAfterCatchUp(
  registry: CatalogRegistry,
  name: string,
  catchUp: () => Promise<void>,
): Promise<Catalog | undefined> {
  const catalog = registry.active(name);
  if (catalog !== undefined) return catalog;
  await catchUp();
  return registry.active(name);
}
