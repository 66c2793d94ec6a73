import type { Logger } from '@icepack/runtime';
import {
  MAX_KEPT_SIZING_SAMPLES,
  MAX_SIZING_SAMPLES,
  sizingKeptSamplesKey,
  sizingModelKey,
  sizingSampleSchema,
  sizingSamplesKey,
  type SizingModel,
  type SizingSample,
} from '@icepack/types';
import type { Redis } from 'ioredis';
import { fitSizing, keptApart } from '../domain/learned-sizing.ts';
import { DEFAULT_SIZING, type SizingOptions } from '../domain/sizing.ts';

/** A sample longer than this is not read (one is about 200 bytes). */
const MAX_SAMPLE_CHARS = 2_048;

/** What the task worker needs of the learned sizing: the options now, and a place for runs. */
export interface SizingModelSource {
  /** The options to size a job with now (the last refresh's fit). */
  options(): SizingOptions;
  /** Records a run's measurements; never throws (a sample is a view, not the work). */
  record(sample: SizingSample): Promise<void>;
}

export interface LearnedSizingStoreOptions {
  readonly redis: Redis;
  readonly catalog: string;
  readonly logger: Logger;
  /** False: jobs are sized from the prior; samples are still recorded. Default true. */
  readonly enabled?: boolean;
  /** How often the model is fitted again from the samples. Default 60 s. */
  readonly refreshMs?: number;
  /** The prior: today's constants, or what the operator set. Default `{}`. */
  readonly prior?: SizingOptions;
  /** Samples kept. Default `MAX_SIZING_SAMPLES`. */
  readonly maxSamples?: number;
  /** Runs kept apart (`keptApart`: large, out of memory or time). Default `MAX_KEPT_SIZING_SAMPLES`. */
  readonly maxKeptSamples?: number;
  /**
   * The group's executor heap per core (`executorMemory / executorCores`): the prior of the
   * fitted heap per core. Without it the heap is not learned.
   */
  readonly groupHeapPerCore?: number;
}

/**
 * A catalog's run samples in Redis (`sizingSamplesKey`, a list, newest first, the last
 * `maxSamples`; the runs the fit must not forget also in `sizingKeptSamplesKey`, the last
 * `maxKeptSamples`) and the model fitted from them. The model is fitted again every `refreshMs`,
 * not per task, and published under `sizingModelKey` (expiring after three refreshes) for the
 * planner API. Before the first refresh, or when a refresh fails, jobs are sized from the
 * last fit (the prior at first).
 */
export class LearnedSizingStore implements SizingModelSource {
  readonly #o: Required<Omit<LearnedSizingStoreOptions, 'groupHeapPerCore'>> &
    Pick<LearnedSizingStoreOptions, 'groupHeapPerCore'>;
  #options: SizingOptions;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: LearnedSizingStoreOptions) {
    this.#o = {
      enabled: true,
      refreshMs: 60_000,
      prior: {},
      maxSamples: MAX_SIZING_SAMPLES,
      maxKeptSamples: MAX_KEPT_SIZING_SAMPLES,
      ...options,
    };
    this.#options = this.#o.prior;
  }

  options(): SizingOptions {
    return this.#options;
  }

  async record(sample: SizingSample): Promise<void> {
    const key = sizingSamplesKey(this.#o.catalog);
    try {
      const value = JSON.stringify(sizingSampleSchema.parse(sample));
      const tx = this.#o.redis
        .multi()
        .lpush(key, value)
        .ltrim(key, 0, this.#o.maxSamples - 1);
      if (keptApart(sample)) {
        const kept = sizingKeptSamplesKey(this.#o.catalog);
        tx.lpush(kept, value).ltrim(kept, 0, this.#o.maxKeptSamples - 1);
      }
      await tx.exec();
    } catch (error) {
      this.#o.logger.warn({ err: error, catalog: this.#o.catalog }, 'sizing sample not recorded');
    }
  }

  /**
   * The stored samples, newest first: the newest ones, then the kept ones older than those
   * (a kept run still among the newest is in both lists and counted once). One that is not a
   * sample is skipped and logged.
   */
  async samples(): Promise<SizingSample[]> {
    const key = sizingSamplesKey(this.#o.catalog);
    const [recent, kept] = await Promise.all([
      this.#o.redis.lrange(key, 0, this.#o.maxSamples - 1),
      this.#o.redis.lrange(sizingKeptSamplesKey(this.#o.catalog), 0, this.#o.maxKeptSamples - 1),
    ]);
    const values = [...recent, ...olderKept(recent, kept)];
    const samples: SizingSample[] = [];
    let invalid = 0;
    for (const value of values) {
      const parsed =
        value.length <= MAX_SAMPLE_CHARS
          ? sizingSampleSchema.safeParse(safeJson(value))
          : undefined;
      if (parsed?.success === true) samples.push(parsed.data);
      else invalid += 1;
    }
    if (invalid > 0) {
      this.#o.logger.warn({ catalog: this.#o.catalog, key, invalid }, 'sizing samples skipped');
    }
    return samples;
  }

  /** Fits the model from the samples, uses it from now on and publishes it. */
  async refresh(): Promise<SizingModel> {
    const { catalog, enabled, prior, redis, refreshMs } = this.#o;
    const fit = fitSizing(await this.samples(), prior, undefined, this.#o.groupHeapPerCore);
    this.#options = enabled ? fit.options : prior;
    const model: SizingModel = {
      catalog,
      learned: enabled,
      ...fit.model,
      // Off: sizeJob uses the prior, whatever the fit says; the fit is still shown.
      bytesPerCore: enabled
        ? fit.model.bytesPerCore
        : (prior.bytesPerCore ?? DEFAULT_SIZING.bytesPerCore),
      at: new Date().toISOString(),
    };
    await redis.set(sizingModelKey(catalog), JSON.stringify(model), 'PX', refreshMs * 3);
    return model;
  }

  start(): void {
    if (this.#timer !== undefined) return;
    const refresh = (): void => {
      this.refresh().catch((error: unknown) =>
        this.#o.logger.warn({ err: error, catalog: this.#o.catalog }, 'sizing model not refreshed'),
      );
    };
    refresh();
    this.#timer = setInterval(refresh, this.#o.refreshMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/**
 * The kept values not also among the newest: each kept value is skipped once for every time
 * it occurs among them (the same run was pushed to both lists in one transaction).
 */
function olderKept(recent: readonly string[], kept: readonly string[]): string[] {
  const inRecent = new Map<string, number>();
  for (const v of recent) inRecent.set(v, (inRecent.get(v) ?? 0) + 1);
  return kept.filter((v) => {
    const n = inRecent.get(v) ?? 0;
    if (n === 0) return true;
    inRecent.set(v, n - 1);
    return false;
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
