import type { SizingSample } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LEARNED_SIZING,
  fitSizing,
  HEAP_HEADROOM,
  keptApart,
  runSample,
  TARGET_RUN_SECONDS,
} from './learned-sizing.ts';
import { OUT_OF_MEMORY_KIND } from './resource-failure.ts';
import { DEFAULT_SIZING } from './sizing.ts';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const prior = DEFAULT_SIZING.bytesPerCore / TARGET_RUN_SECONDS;

/** A succeeded run that read `bytes` at `rate` bytes per CPU second. */
function run(bytes: number, rate: number, extra: Partial<SizingSample> = {}): SizingSample {
  return {
    at: '2026-12-02T10:00:00.000Z',
    bytes,
    files: 100,
    cores: 3,
    memoryBytes: 6 * GiB,
    wallMs: 60_000,
    cpuSeconds: bytes / rate,
    outcome: 'ok',
    ...extra,
  };
}

describe('fitSizing', () => {
  it('is the prior — today’s 2 GiB per core — without samples', () => {
    const fit = fitSizing([]);
    expect(fit.options.bytesPerCore).toBe(DEFAULT_SIZING.bytesPerCore);
    expect(fit.model.bytesPerCoreSecond).toEqual({
      prior,
      fitted: prior,
      min: prior / 4,
      max: prior * 4,
    });
    expect(fit.model.samples).toEqual({ total: 0, used: 0, oom: 0, timeout: 0 });
  });

  it('shrinks toward the prior when samples are few, and follows them when many', () => {
    const fast = prior * 2;
    const one = fitSizing([run(GiB, fast)]).model.bytesPerCoreSecond.fitted;
    const many = fitSizing(Array.from({ length: 95 }, () => run(GiB, fast))).model
      .bytesPerCoreSecond.fitted;
    // One sample against the prior's weight of 5: a sixth of the way in log space.
    expect(one).toBeCloseTo(prior * 2 ** (1 / 6), 6);
    // 95 samples: 95 % of the way.
    expect(many).toBeCloseTo(prior * 2 ** 0.95, 6);
    expect(one).toBeGreaterThan(prior);
    expect(many).toBeGreaterThan(one);
    expect(fitSizing(Array.from({ length: 95 }, () => run(GiB, fast))).options.bytesPerCore).toBe(
      Math.round(many * TARGET_RUN_SECONDS),
    );
  });

  it('stays within [prior / 4, prior × 4]', () => {
    const slow = fitSizing(Array.from({ length: 200 }, () => run(GiB, prior / 100)));
    const fast = fitSizing(Array.from({ length: 200 }, () => run(GiB, prior * 100)));
    expect(slow.model.bytesPerCoreSecond.fitted).toBe(prior / 4);
    expect(fast.model.bytesPerCoreSecond.fitted).toBe(prior * 4);
    expect(slow.options.bytesPerCore).toBe(Math.round(DEFAULT_SIZING.bytesPerCore / 4));
  });

  it('takes the median: a few outliers do not move it', () => {
    const steady = Array.from({ length: 20 }, () => run(GiB, prior * 2));
    const withOutliers = [
      ...steady,
      run(GiB, prior / 1000),
      run(GiB, prior / 1000),
      run(GiB, prior * 1000),
    ];
    expect(fitSizing(withOutliers).model.bytesPerCoreSecond.fitted).toBeCloseTo(
      prior * 2 ** (23 / 28),
      6,
    );
  });

  it('ignores small runs (JVM start, not rewriting), failed runs, and counts the latter', () => {
    const fit = fitSizing([
      run(DEFAULT_LEARNED_SIZING.minSampleBytes - 1, prior / 50),
      run(GiB, prior / 50, { outcome: 'oom' }),
      run(GiB, prior / 50, { outcome: 'timeout' }),
    ]);
    expect(fit.model.bytesPerCoreSecond.fitted).toBe(prior);
    expect(fit.model.samples).toEqual({ total: 3, used: 0, oom: 1, timeout: 1 });
  });

  it('uses wall time × cores requested when the run’s CPU is unknown', () => {
    // 1 GiB in 60 s on 3 cores: 1 GiB / 180 core-seconds, the same for 200 such runs.
    const unmeasured: SizingSample = { ...run(GiB, 1) };
    delete (unmeasured as { cpuSeconds?: number }).cpuSeconds;
    const fit = fitSizing(
      Array.from({ length: 200 }, () => unmeasured),
      {},
      {
        ...DEFAULT_LEARNED_SIZING,
        bound: 1000,
      },
    );
    const measured = GiB / 180;
    expect(fit.model.bytesPerCoreSecond.fitted).toBeCloseTo(
      Math.exp((200 * Math.log(measured) + 5 * Math.log(prior)) / 205),
      3,
    );
  });

  it('keeps the other options and fits around a given prior', () => {
    const fit = fitSizing([], { bytesPerCore: GiB, filesPerCore: 100 });
    expect(fit.options).toEqual({ bytesPerCore: GiB, filesPerCore: 100 });
    expect(fit.model.bytesPerCoreSecond.prior).toBe(GiB / TARGET_RUN_SECONDS);
  });
});

describe('keptApart', () => {
  it('keeps the runs the fit counts or learns a heap from, not the small successes', () => {
    const min = DEFAULT_LEARNED_SIZING.minSampleBytes;
    expect(keptApart(run(min, prior))).toBe(true);
    expect(keptApart(run(min - 1, prior))).toBe(false);
    expect(keptApart(run(300_000, prior, { outcome: 'oom' }))).toBe(true);
    expect(keptApart(run(300_000, prior, { outcome: 'timeout' }))).toBe(true);
  });
});

describe('fitSizing: executor heap per core (per file group)', () => {
  const group = 2 * GiB; // the default group: 4g over 2 executor cores

  /** A succeeded run whose executors peaked at `peak` bytes of heap over `cores` slots. */
  function measured(peak: number, cores = 2): SizingSample {
    return run(GiB, prior, { peakHeapBytes: peak, heapCores: cores, heapPerCoreBytes: group });
  }

  it('is not learned without the group’s heap per core, and is the group’s without samples', () => {
    expect(fitSizing([measured(GiB)]).options.executorHeapPerCoreBytes).toBeUndefined();
    expect(fitSizing([measured(GiB)]).model.heapPerCore).toBeUndefined();
    const fit = fitSizing([run(GiB, prior)], {}, undefined, group);
    expect(fit.model.heapPerCore).toEqual({
      prior: group,
      fitted: group,
      min: group / 4,
      max: group * 4,
      samples: 0,
    });
    expect(fit.options.executorHeapPerCoreBytes).toBe(group);
  });

  it('moves toward the measured peak per core with headroom, as samples accumulate', () => {
    // 1 GiB peak over 2 cores: 512 MiB a file group, 768 MiB with the headroom.
    const need = (GiB / 2) * HEAP_HEADROOM;
    const few = fitSizing([measured(GiB)], {}, undefined, group).model.heapPerCore!;
    const many = fitSizing(
      Array.from({ length: 195 }, () => measured(GiB)),
      {},
      undefined,
      group,
    ).model.heapPerCore!;
    expect(few.fitted).toBe(Math.round(Math.exp((Math.log(need) + 5 * Math.log(group)) / 6)));
    expect(many.fitted).toBe(
      Math.round(Math.exp((195 * Math.log(need) + 5 * Math.log(group)) / 200)),
    );
    expect(many.fitted).toBeLessThan(few.fitted);
    expect(many.fitted).toBeGreaterThan(need);
    expect(many.samples).toBe(195);
  });

  it('covers the 90th percentile of the needs, not the median: memory errs high', () => {
    const small = Array.from({ length: 18 }, () => measured(GiB));
    const large = Array.from({ length: 2 }, () => measured(3 * GiB));
    const fit = fitSizing(
      [...small, ...large],
      {},
      { ...DEFAULT_LEARNED_SIZING, priorWeight: 0 },
      group,
    );
    // Nearest rank: the 18th of 20 needs is still a small run's; the 19th would be large.
    expect(fit.model.heapPerCore!.fitted).toBe(Math.round((GiB / 2) * HEAP_HEADROOM));
    const more = [...small.slice(2), ...large, ...large];
    expect(
      fitSizing(more, {}, { ...DEFAULT_LEARNED_SIZING, priorWeight: 0 }, group).model.heapPerCore!
        .fitted,
    ).toBe(Math.round(((3 * GiB) / 2) * HEAP_HEADROOM));
  });

  it('counts a run out of memory as needing twice the heap it had', () => {
    const oom = run(GiB, prior, { outcome: 'oom', heapPerCoreBytes: GiB });
    const fit = fitSizing(
      Array.from({ length: 10 }, () => oom),
      {},
      { ...DEFAULT_LEARNED_SIZING, priorWeight: 0 },
      group,
    );
    expect(fit.model.heapPerCore).toMatchObject({ fitted: 2 * GiB, samples: 10 });
  });

  it('stays within [group / 4, group × 4]', () => {
    const tiny = fitSizing(
      Array.from({ length: 200 }, () => measured(MiB)),
      {},
      undefined,
      group,
    );
    const huge = fitSizing(
      Array.from({ length: 200 }, () => measured(64 * GiB)),
      {},
      undefined,
      group,
    );
    expect(tiny.options.executorHeapPerCoreBytes).toBe(group / 4);
    expect(huge.options.executorHeapPerCoreBytes).toBe(group * 4);
  });
});

describe('runSample', () => {
  const base = {
    estimate: { bytes: 5 * GiB, files: 300 },
    cores: 3,
    memoryBytes: 6 * GiB,
    wallMs: 42_000.4,
    at: Date.parse('2026-12-02T10:00:00.000Z'),
  };

  it('takes a succeeded run’s bytes and files from its commits, and its CPU', () => {
    expect(
      runSample({
        ...base,
        ok: true,
        commits: { bytesRead: GiB, filesRewritten: 60 },
        cpuSeconds: 12.5,
      }),
    ).toEqual({
      at: '2026-12-02T10:00:00.000Z',
      bytes: GiB,
      files: 60,
      cores: 3,
      memoryBytes: 6 * GiB,
      wallMs: 42_000,
      cpuSeconds: 12.5,
      outcome: 'ok',
    });
  });

  it('keeps the heap requested per core and the job’s measured peak with its cores', () => {
    expect(
      runSample({
        ...base,
        ok: true,
        cpuSeconds: 3,
        heapPerCoreBytes: 2 * GiB + 0.4,
        memory: { peakHeapBytes: 900 * MiB, cores: 2 },
      }),
    ).toMatchObject({ heapPerCoreBytes: 2 * GiB, peakHeapBytes: 900 * MiB, heapCores: 2 });
  });

  it('marks timed-out and out-of-memory runs with the task’s estimate', () => {
    expect(runSample({ ...base, ok: false, errorKind: 'timeout' })).toMatchObject({
      bytes: 5 * GiB,
      files: 300,
      outcome: 'timeout',
    });
    expect(runSample({ ...base, ok: false, errorKind: OUT_OF_MEMORY_KIND })?.outcome).toBe('oom');
  });

  it('leaves none for failures that say nothing of size, nor for a success without figures', () => {
    for (const errorKind of ['commit-conflict', 'bad-input', 'lost', 'failed']) {
      expect(runSample({ ...base, ok: false, errorKind })).toBeUndefined();
    }
    expect(runSample({ ...base, ok: true })).toBeUndefined();
  });
});
