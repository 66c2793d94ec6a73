// The learned sizing's store on real Redis: samples kept per catalog, newest first and
// bounded; a value that is not a sample skipped; the fitted model used for sizing and
// published under the key the planner reads, in the shape it validates.
import { randomBytes } from 'node:crypto';
import { createLogger } from '@icepack/runtime';
import {
  sizingKeptSamplesKey,
  sizingModelKey,
  sizingModelSchema,
  sizingSamplesKey,
  type SizingSample,
} from '@icepack/types';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TARGET_RUN_SECONDS } from '../domain/learned-sizing.ts';
import { DEFAULT_SIZING } from '../domain/sizing.ts';
import { LearnedSizingStore } from './sizing-store.ts';

const infra = inject('infra');
const GiB = 2 ** 30;
const logger = createLogger({ service: 'sizing-store-test', level: 'silent' });
const catalogs: string[] = [];
let redis: Redis;

function catalog(): string {
  const name = `sizing${randomBytes(3).toString('hex')}`;
  catalogs.push(name);
  return name;
}

/** A succeeded 1 GiB run at `rate` bytes per CPU second. */
function sample(rate: number, at = '2026-12-02T10:00:00.000Z'): SizingSample {
  return {
    at,
    bytes: GiB,
    files: 40,
    cores: 2,
    memoryBytes: 4 * GiB,
    wallMs: 90_000,
    cpuSeconds: GiB / rate,
    outcome: 'ok',
  };
}

const prior = DEFAULT_SIZING.bytesPerCore / TARGET_RUN_SECONDS;

beforeAll(() => {
  redis = new Redis(infra.redisUrl);
});

afterAll(async () => {
  for (const name of catalogs) {
    await redis.del(sizingSamplesKey(name), sizingKeptSamplesKey(name), sizingModelKey(name));
  }
  redis.disconnect();
});

describe('the learned sizing store', () => {
  it('keeps the newest samples of a catalog, at most maxSamples (kept runs at most maxKeptSamples), apart from other catalogs', async () => {
    const a = catalog();
    const b = catalog();
    const store = new LearnedSizingStore({
      redis,
      catalog: a,
      logger,
      maxSamples: 3,
      maxKeptSamples: 1,
    });
    for (let i = 0; i < 5; i += 1) {
      await store.record(sample(prior, `2026-12-02T10:00:0${String(i)}.000Z`));
    }
    await new LearnedSizingStore({ redis, catalog: b, logger }).record(sample(prior));
    const kept = await store.samples();
    expect(kept.map((s) => s.at)).toEqual([
      '2026-12-02T10:00:04.000Z',
      '2026-12-02T10:00:03.000Z',
      '2026-12-02T10:00:02.000Z',
    ]);
    expect(await redis.llen(sizingSamplesKey(b))).toBe(1);
    // The 1 GiB runs are kept apart too, bounded likewise; the newest is counted once.
    expect(await redis.llen(sizingKeptSamplesKey(a))).toBe(1);
  });

  it('sizes from the prior until refreshed, then from the fit, and publishes the model', async () => {
    const name = catalog();
    const store = new LearnedSizingStore({ redis, catalog: name, logger, refreshMs: 60_000 });
    for (let i = 0; i < 20; i += 1) await store.record(sample(prior * 2));
    // Something else under the key (an older format, a hand edit) is skipped, not fatal.
    await redis.lpush(sizingSamplesKey(name), '{"not":"a sample"}', 'not json');
    expect(store.options()).toEqual({});

    const model = await store.refresh();
    expect(model.samples).toEqual({ total: 20, used: 20, oom: 0, timeout: 0 });
    expect(model.learned).toBe(true);
    expect(model.bytesPerCoreSecond.fitted).toBeCloseTo(prior * 2 ** (20 / 25), 6);
    expect(store.options().bytesPerCore).toBe(model.bytesPerCore);
    expect(model.bytesPerCore).toBeGreaterThan(DEFAULT_SIZING.bytesPerCore);

    const published = sizingModelSchema.parse(JSON.parse((await redis.get(sizingModelKey(name)))!));
    expect(published).toEqual(model);
    const ttl = await redis.pttl(sizingModelKey(name));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(180_000);
  });

  it('fits the executor heap per core from measured peaks, through Redis, when given the group’s', async () => {
    const name = catalog();
    const group = 2 * GiB;
    const store = new LearnedSizingStore({ redis, catalog: name, logger, groupHeapPerCore: group });
    // Runs whose executors peaked at 1 GiB over 2 cores: 512 MiB a file group.
    for (let i = 0; i < 20; i += 1) {
      await store.record({
        ...sample(prior),
        peakHeapBytes: GiB,
        heapCores: 2,
        heapPerCoreBytes: group,
      });
    }
    const model = await store.refresh();
    const need = (GiB / 2) * 1.5;
    expect(model.heapPerCore).toEqual({
      prior: group,
      fitted: Math.round(Math.exp((20 * Math.log(need) + 5 * Math.log(group)) / 25)),
      min: group / 4,
      max: group * 4,
      samples: 20,
    });
    expect(store.options().executorHeapPerCoreBytes).toBe(model.heapPerCore!.fitted);
    // The fields survive the store: what was recorded is what is read back.
    expect((await store.samples())[0]).toMatchObject({ peakHeapBytes: GiB, heapCores: 2 });
  });

  it('switched off: records and shows the fit, but sizes from the prior', async () => {
    const name = catalog();
    const store = new LearnedSizingStore({ redis, catalog: name, logger, enabled: false });
    for (let i = 0; i < 20; i += 1) await store.record(sample(prior * 2));
    const model = await store.refresh();
    expect(model.learned).toBe(false);
    expect(model.bytesPerCoreSecond.fitted).toBeGreaterThan(prior);
    expect(model.bytesPerCore).toBe(DEFAULT_SIZING.bytesPerCore);
    expect(store.options()).toEqual({});
  });

  it('keeps the runs the fit learns from when many small runs follow them', async () => {
    // Cost benchmark, 2026-12-03: five 300 MB merges, then 400 small tasks of one catalog; at
    // the end the model had 200 samples and used none — the large runs had been trimmed away
    // and the fit was back at the prior. An out-of-memory run is as rare and as telling.
    const name = catalog();
    const store = new LearnedSizingStore({ redis, catalog: name, logger, maxSamples: 10 });
    await store.record(sample(prior * 2, '2026-12-02T09:00:00.000Z'));
    await store.record({ ...sample(prior), outcome: 'oom', at: '2026-12-02T09:00:01.000Z' });
    for (let i = 0; i < 30; i += 1) {
      await store.record({ ...sample(prior), bytes: 300_000, cpuSeconds: 2 });
    }
    const model = await store.refresh();
    expect(model.samples).toEqual({ total: 12, used: 1, oom: 1, timeout: 0 });
    expect(model.bytesPerCoreSecond.fitted).toBeGreaterThan(prior);
    // Newest first: the small runs, then the older kept ones, none twice.
    const kept = await store.samples();
    expect(kept.slice(10).map((s) => s.at)).toEqual([
      '2026-12-02T09:00:01.000Z',
      '2026-12-02T09:00:00.000Z',
    ]);
  });

  it('does not count a kept run twice while it is also among the newest', async () => {
    const name = catalog();
    const store = new LearnedSizingStore({ redis, catalog: name, logger });
    for (let i = 0; i < 3; i += 1) await store.record(sample(prior * 2));
    const model = await store.refresh();
    expect(model.samples).toEqual({ total: 3, used: 3, oom: 0, timeout: 0 });
    expect(await redis.llen(sizingKeptSamplesKey(name))).toBe(3);
  });
});
