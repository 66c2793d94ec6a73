import type { Logger } from '@icepack/runtime';
import { QUOTA_USE_EVERY_MS, quotaUseKey, type Binding, type QuotaUse } from '@icepack/types';
import type { Redis } from 'ioredis';
import type { QuotaGate } from './quota.ts';

export interface QuotaUsePublisherOptions {
  readonly redis: Redis;
  readonly quota: QuotaGate;
  readonly binding: Binding;
  readonly logger: Logger;
  /** How often. Default `QUOTA_USE_EVERY_MS`; the value expires after three intervals. */
  readonly everyMs?: number;
}

/**
 * Writes a binding's quota use (`QuotaUse` under `quotaUseKey`) for the console, now and then
 * every `everyMs`. The value expires after three intervals, so a stopped dispatcher's figures
 * do not linger as current. A failed read or write is logged, never thrown: the figures are
 * a view, not the work.
 */
export class QuotaUsePublisher {
  readonly #o: Required<QuotaUsePublisherOptions>;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: QuotaUsePublisherOptions) {
    this.#o = { everyMs: QUOTA_USE_EVERY_MS, ...options };
  }

  start(): void {
    if (this.#o.quota.usage === undefined || this.#timer !== undefined) return;
    void this.publish();
    this.#timer = setInterval(() => void this.publish(), this.#o.everyMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async publish(): Promise<void> {
    const { quota, binding, redis, everyMs } = this.#o;
    try {
      const usage = await quota.usage?.(binding);
      if (usage === undefined) return;
      const use: QuotaUse = { group: binding.namespace, ...usage, at: new Date().toISOString() };
      await redis.set(quotaUseKey(binding.catalog), JSON.stringify(use), 'PX', everyMs * 3);
    } catch (error) {
      this.#o.logger.warn({ err: error, catalog: binding.catalog }, 'quota use not published');
    }
  }
}
