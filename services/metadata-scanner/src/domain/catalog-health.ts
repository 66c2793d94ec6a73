import { backoffDelay } from '@icepack/runtime';
import type { BackoffOptions } from '@icepack/runtime';

interface Failure {
  readonly attempts: number;
  readonly retryAt: number;
  readonly reason: string;
}

export interface CatalogHealthReport {
  readonly ok: boolean;
  readonly detail?: string;
}

/**
 * Per-catalog circuit with backoff: after a failure the catalog is not asked again until
 * its backoff has passed (doubling per consecutive failure, capped), so an outage costs
 * one request per backoff step rather than one per table. Pure: the clock is injected.
 */
export class CatalogHealth {
  readonly #failures = new Map<string, Failure>();
  readonly #backoff: BackoffOptions;
  readonly #now: () => number;

  constructor(backoff: BackoffOptions = {}, now: () => number = Date.now) {
    this.#backoff = backoff;
    this.#now = now;
  }

  /** Records a failure; returns the ms until the catalog may be tried again. */
  failed(catalog: string, reason: string): number {
    const attempts = (this.#failures.get(catalog)?.attempts ?? 0) + 1;
    const delay = backoffDelay(attempts, this.#backoff);
    this.#failures.set(catalog, { attempts, retryAt: this.#now() + delay, reason });
    return delay;
  }

  succeeded(catalog: string): boolean {
    return this.#failures.delete(catalog);
  }

  forget(catalog: string): void {
    this.#failures.delete(catalog);
  }

  isDown(catalog: string): boolean {
    return this.#failures.has(catalog);
  }

  /** 0 when the catalog may be asked now; otherwise how long to hold off. */
  holdOffMs(catalog: string): number {
    const failure = this.#failures.get(catalog);
    return failure === undefined ? 0 : Math.max(0, failure.retryAt - this.#now());
  }

  /** Ready when no catalog is failing; the detail names each failing one and why. */
  report(): CatalogHealthReport {
    if (this.#failures.size === 0) return { ok: true };
    const detail = [...this.#failures]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([name, f]) => `${name}: ${f.reason} (${f.attempts} failures)`)
      .join('; ');
    return { ok: false, detail };
  }
}
