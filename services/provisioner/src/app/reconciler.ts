import type { Logger } from '@icepack/runtime';
import type { ProvisionerMetrics } from '../adapters/provisioner-metrics.ts';
import type { CatalogService } from './catalog-service.ts';
import type { GroupService } from './group-service.ts';

export interface ReconcilerOptions {
  /** Time between passes over every group. */
  readonly intervalMs: number;
  /** Time between passes over a draining group. */
  readonly drainPollMs: number;
  readonly logger: Logger;
  /** Counts the passes. Default none. */
  readonly metrics?: ProvisionerMetrics;
}

/**
 * Re-applies every group at start and on an interval (heals crashes between steps and
 * drift such as a hand-deleted quota), republishes catalogs whose publication failed, and
 * follows draining groups more closely until they are gone.
 */
export class Reconciler {
  readonly #groups: GroupService;
  readonly #catalogs: CatalogService;
  readonly #options: ReconcilerOptions;
  readonly #draining = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(groups: GroupService, catalogs: CatalogService, options: ReconcilerOptions) {
    this.#groups = groups;
    this.#catalogs = catalogs;
    this.#options = options;
  }

  /** One full pass now; resolves when it is done. */
  async runOnce(): Promise<void> {
    if (this.#running !== undefined) return this.#running;
    this.#running = (async () => {
      try {
        await this.#catalogs.republishPending();
        await this.#groups.reconcileAll();
        this.#options.metrics?.passFinished('ok');
      } catch (error) {
        this.#options.metrics?.passFinished('failed');
        this.#options.logger.error({ err: error }, 'reconcile pass failed; next pass retries');
      } finally {
        this.#running = undefined;
      }
    })();
    return this.#running;
  }

  /** Runs a pass now and then every `intervalMs`. */
  start(): Promise<void> {
    const tick = () => {
      if (this.#stopped) return;
      this.#timer = setTimeout(() => {
        void this.runOnce().finally(tick);
      }, this.#options.intervalMs);
    };
    return this.runOnce().finally(tick);
  }

  /** Polls a group being deleted until it is gone (or the process stops). */
  follow(name: string): void {
    if (this.#draining.has(name) || this.#stopped) return;
    this.#draining.add(name);
    const poll = async (): Promise<void> => {
      while (!this.#stopped) {
        try {
          if ((await this.#groups.reconcile(name)) === undefined) break;
        } catch (error) {
          this.#options.logger.warn({ err: error, group: name }, 'drain pass failed; retrying');
        }
        await new Promise((resolve) => setTimeout(resolve, this.#options.drainPollMs));
      }
      this.#draining.delete(name);
    };
    void poll();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    await this.#running;
  }
}
