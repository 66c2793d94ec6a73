// Job sizes learned from measured runs (issue 18, ADR 0026). Pure: the samples come from the
// store, the fitted options go to `sizeJob`. The fit moves `bytesPerCore` and, given the
// group's per-core heap, `executorHeapPerCoreBytes`; the other knobs keep today's constants.
import type { SizingModel, SizingSample } from '@icepack/types';
import { OUT_OF_MEMORY_KIND } from './resource-failure.ts';
import { DEFAULT_SIZING, type SizingOptions } from './sizing.ts';

const MiB = 1024 * 1024;

/**
 * The run time `bytesPerCore` is meant to fill: today's constant (2 GiB per core) reads as
 * "a core rewrites 2 GiB in about ten minutes", so the prior throughput is 2 GiB / 600 s per
 * core-second and a fitted throughput becomes bytes per core by the same ten minutes.
 */
export const TARGET_RUN_SECONDS = 600;

export interface LearnedSizingSettings {
  /**
   * A run that read less than this is not counted: its time is mostly the JVM and Spark
   * session start, so its throughput says nothing about rewriting (a 250 KB merge takes
   * 20–50 s). Default 256 MiB.
   */
  readonly minSampleBytes: number;
  /**
   * Weight of the prior in samples: with n counted samples the fit is
   * `exp((n·ln median + k·ln prior) / (n + k))`, so a few runs move it a little. Default 5.
   */
  readonly priorWeight: number;
  /** The fit stays within [prior / bound, prior × bound]. Default 4. */
  readonly bound: number;
}

export const DEFAULT_LEARNED_SIZING: LearnedSizingSettings = {
  minSampleBytes: 256 * MiB,
  priorWeight: 5,
  bound: 4,
};

export interface LearnedSizing {
  /** Options for `sizeJob`: `bytesPerCore` from the fit, the rest as given. */
  readonly options: SizingOptions;
  readonly model: Omit<SizingModel, 'catalog' | 'learned' | 'at'>;
}

/**
 * A run the fit must not forget when many others follow it: large enough to count for the
 * throughput, or out of memory or time (its heap need, and the reason a task grew). Such runs
 * are also kept apart from the newest samples (`sizingKeptSamplesKey`): a catalog of mostly
 * small tables would otherwise push its few large runs out of the window within minutes.
 */
export function keptApart(
  sample: SizingSample,
  settings: LearnedSizingSettings = DEFAULT_LEARNED_SIZING,
): boolean {
  return sample.outcome !== 'ok' || sample.bytes >= settings.minSampleBytes;
}

/**
 * Core-seconds a run spent: the CPU it used when measured, else its wall time × the cores it
 * requested (an upper bound: idle cores count). CPU is preferred so that an over-sized job
 * does not look slow and get sized larger still.
 */
function coreSeconds(sample: SizingSample): number {
  if (sample.cpuSeconds !== undefined && sample.cpuSeconds > 0) return sample.cpuSeconds;
  return (sample.wallMs / 1000) * sample.cores;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const at = (i: number): number => sorted[i] ?? Number.NaN;
  return sorted.length % 2 === 1 ? at(mid) : (at(mid - 1) + at(mid)) / 2;
}

/** The heap a file group is given over the most a measured one used. */
export const HEAP_HEADROOM = 1.5;

/** Which share of the measured needs the heap covers: memory errs high, throughput does not. */
export const HEAP_QUANTILE = 0.9;

/** Nearest-rank quantile of non-empty `values`. */
function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
}

/** `exp((n·ln value + k·ln prior) / (n + k))`, clamped: a few samples move it a little. */
function shrunk(value: number, n: number, prior: number, k: number, min: number, max: number) {
  const logFit = (n * Math.log(value) + k * Math.log(prior)) / (n + k);
  return Math.min(Math.max(Math.exp(logFit), min), max);
}

/**
 * What one run says a core's file group needs in heap: a measured run, its peak over the
 * cores that shared the heap, with headroom; a run out of memory, twice what it had (it
 * needed more; the next attempt of its task gets twice, `domain/resource-failure.ts`).
 */
function heapNeed(sample: SizingSample): number | undefined {
  if (sample.outcome === 'ok' && sample.peakHeapBytes !== undefined) {
    return (sample.peakHeapBytes / (sample.heapCores ?? 1)) * HEAP_HEADROOM;
  }
  if (sample.outcome === 'oom' && sample.heapPerCoreBytes !== undefined) {
    return sample.heapPerCoreBytes * 2;
  }
  return undefined;
}

/**
 * Fits the executor heap per core (per file group rewritten at once) from measured peaks:
 * the 90th percentile of the needs — a heap too small kills the run, one too large only
 * holds quota — shrunk toward the group's per-core heap in log space and clamped to
 * [prior / bound, prior × bound]; `sizeJob` still never exceeds the group's `executorMemory`.
 */
function fitHeapPerCore(
  samples: readonly SizingSample[],
  prior: number,
  settings: LearnedSizingSettings,
): NonNullable<SizingModel['heapPerCore']> {
  const min = Math.round(prior / settings.bound);
  const max = Math.round(prior * settings.bound);
  const needs = samples.map(heapNeed).filter((n): n is number => n !== undefined && n > 0);
  const fitted =
    needs.length === 0
      ? prior
      : shrunk(quantile(needs, HEAP_QUANTILE), needs.length, prior, settings.priorWeight, min, max);
  return { prior: Math.round(prior), fitted: Math.round(fitted), min, max, samples: needs.length };
}

/**
 * Fits bytes per core-second from a catalog's recent samples: the median over the succeeded
 * runs of meaningful size (robust to a run that waited on a slow store or a busy node),
 * shrunk toward the prior in log space (throughputs are ratios), clamped to the bounds. With
 * `groupHeapPerCore` (the group's `executorMemory / executorCores`) it also fits the executor
 * heap per core from the runs' measured peaks.
 */
export function fitSizing(
  samples: readonly SizingSample[],
  base: SizingOptions = {},
  settings: LearnedSizingSettings = DEFAULT_LEARNED_SIZING,
  groupHeapPerCore?: number,
): LearnedSizing {
  const priorBytesPerCore = base.bytesPerCore ?? DEFAULT_SIZING.bytesPerCore;
  const prior = priorBytesPerCore / TARGET_RUN_SECONDS;
  const min = prior / settings.bound;
  const max = prior * settings.bound;
  const rates = samples
    .filter((s) => s.outcome === 'ok' && s.bytes >= settings.minSampleBytes)
    .map((s) => ({ bytes: s.bytes, seconds: coreSeconds(s) }))
    .filter((s) => s.seconds > 0)
    .map((s) => s.bytes / s.seconds);
  const fitted =
    rates.length === 0
      ? prior
      : shrunk(median(rates), rates.length, prior, settings.priorWeight, min, max);
  const bytesPerCore = Math.round(fitted * TARGET_RUN_SECONDS);
  const heapPerCore =
    groupHeapPerCore === undefined || groupHeapPerCore <= 0
      ? undefined
      : fitHeapPerCore(samples, groupHeapPerCore, settings);
  return {
    options: {
      ...base,
      bytesPerCore,
      ...(heapPerCore === undefined ? {} : { executorHeapPerCoreBytes: heapPerCore.fitted }),
    },
    model: {
      ...(heapPerCore === undefined ? {} : { heapPerCore }),
      samples: {
        total: samples.length,
        used: rates.length,
        oom: samples.filter((s) => s.outcome === 'oom').length,
        timeout: samples.filter((s) => s.outcome === 'timeout').length,
      },
      bytesPerCoreSecond: { prior, fitted, min, max },
      bytesPerCore,
      targetRunSeconds: TARGET_RUN_SECONDS,
    },
  };
}

/** How a run ended, as far as the sample needs it (the runner's `RunEnd`, flattened). */
export interface RunMeasurement {
  /** The task's estimate, used when the job reported no commit figures. */
  readonly estimate: { readonly bytes: number; readonly files: number };
  readonly ok: boolean;
  /** The job's figures, when the runner could read its result. */
  readonly commits?: { readonly bytesRead: number; readonly filesRewritten: number };
  readonly cpuSeconds?: number;
  /** The failure's kind, for a failed run. */
  readonly errorKind?: string;
  /** What the run requested. */
  readonly cores: number;
  readonly memoryBytes: number;
  /** Executor heap requested per executor core. */
  readonly heapPerCoreBytes?: number;
  /** The job's measured heap: its peak and the task slots that shared it. */
  readonly memory?: { readonly peakHeapBytes: number; readonly cores: number };
  readonly wallMs: number;
  /** When the run's end was known (ms). */
  readonly at: number;
}

/**
 * The sample a run leaves, or none: a succeeded run whose result was read, an out-of-memory
 * run and a timed-out run (they say the size was too small). Other failures (conflicts, bad
 * input, a lost process) say nothing about size and leave none; so does a success whose
 * result the runner could not read (no figures of what it did).
 */
export function runSample(run: RunMeasurement): SizingSample | undefined {
  let outcome: SizingSample['outcome'];
  if (run.ok) {
    if (run.commits === undefined && run.cpuSeconds === undefined) return undefined;
    outcome = 'ok';
  } else if (run.errorKind === 'timeout') outcome = 'timeout';
  else if (run.errorKind === OUT_OF_MEMORY_KIND) outcome = 'oom';
  else return undefined;
  return {
    at: new Date(run.at).toISOString(),
    // A job that committed nothing (nothing to do) read nothing: 0, not the estimate.
    bytes: run.commits?.bytesRead ?? run.estimate.bytes,
    files: run.commits?.filesRewritten ?? run.estimate.files,
    cores: Math.max(1, run.cores),
    memoryBytes: Math.max(0, Math.round(run.memoryBytes)),
    wallMs: Math.max(0, Math.round(run.wallMs)),
    ...(run.cpuSeconds === undefined ? {} : { cpuSeconds: run.cpuSeconds }),
    outcome,
    ...(run.heapPerCoreBytes === undefined
      ? {}
      : { heapPerCoreBytes: Math.max(0, Math.round(run.heapPerCoreBytes)) }),
    ...(run.memory === undefined
      ? {}
      : {
          peakHeapBytes: Math.max(0, Math.round(run.memory.peakHeapBytes)),
          heapCores: Math.max(1, Math.round(run.memory.cores)),
        }),
  };
}
