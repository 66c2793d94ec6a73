import { z } from 'zod';

const amount = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const rate = z.number().positive().max(Number.MAX_SAFE_INTEGER);

/**
 * One measured run, as the dispatcher records it when the run's end is known: the work it
 * did, what it asked for and what it used. The learned sizing (the dispatcher's
 * `domain/learned-sizing.ts`) fits from the recent samples of a catalog. Figures only.
 */
export const sizingSampleSchema = z.object({
  /** When the run ended (ISO-8601). */
  at: z.iso.datetime(),
  /** Bytes the run read to rewrite (the job's commits; the task's estimate without them). */
  bytes: amount,
  /** Files the run rewrote (likewise). */
  files: amount,
  /** Cores requested: driver + executor cores × instances. */
  cores: z.number().int().min(1).max(100_000),
  /** Memory requested by the job's pods, Spark's overhead included. */
  memoryBytes: amount,
  /** From the attempt's start to its end being known: JVM start and queueing included. */
  wallMs: amount,
  /** CPU seconds the run used (process CPU locally, executors' task CPU on Spark), if known. */
  cpuSeconds: z.number().min(0).optional(),
  /** `oom`: killed for or failed with out-of-memory; `timeout`: cancelled at the timeout. */
  outcome: z.enum(['ok', 'oom', 'timeout']),
  /** Executor heap requested per executor core (a core rewrites one file group at a time). */
  heapPerCoreBytes: amount.optional(),
  /**
   * The most heap the run's executors used (the job's `memory.peakHeapBytes`: the largest
   * executor's peak on a cluster, the driver JVM's locally), if measured.
   */
  peakHeapBytes: amount.optional(),
  /** The task slots that shared that heap (executor cores; local mode's threads). */
  heapCores: z.number().int().min(1).max(100_000).optional(),
});
export type SizingSample = z.output<typeof sizingSampleSchema>;

/** Samples kept per catalog: the newest this many. */
export const MAX_SIZING_SAMPLES = 200;

/** The Redis list of a catalog's samples, newest first (`LPUSH` + `LTRIM`). */
export function sizingSamplesKey(catalog: string): string {
  return `icepack:sizing:samples:${catalog}`;
}

/**
 * Samples kept apart per catalog: the newest this many of the runs the fit must not forget —
 * runs large enough to measure throughput, and runs that ran out of memory or time. In a lake
 * of mostly small tables the newest {@link MAX_SIZING_SAMPLES} are all small runs, which the
 * fit does not count.
 */
export const MAX_KEPT_SIZING_SAMPLES = 50;

/** The Redis list of a catalog's kept samples, newest first (`LPUSH` + `LTRIM`). */
export function sizingKeptSamplesKey(catalog: string): string {
  return `icepack:sizing:kept:${catalog}`;
}

/**
 * The sizing model a dispatcher uses for a catalog, published under `sizingModelKey(catalog)`
 * each time it refreshes it (expiring after three missed refreshes) for the planner API's
 * `GET /v1/catalogs/{catalog}/sizing`.
 */
export const sizingModelSchema = z.object({
  catalog: z.string().min(1),
  /** False when learned sizing is switched off: jobs are sized from the prior. */
  learned: z.boolean(),
  /** Samples in the store; `used`: those the fit counted (succeeded, large enough). */
  samples: z.object({
    total: amount,
    used: amount,
    oom: amount,
    timeout: amount,
  }),
  /** Input bytes a core rewrites per CPU second: the prior, the fit and its bounds. */
  bytesPerCoreSecond: z.object({
    prior: rate,
    fitted: rate,
    min: rate,
    max: rate,
  }),
  /** What `sizeJob` uses: bytes per core = bytes per core-second × the target run time. */
  bytesPerCore: amount,
  /**
   * Executor heap per core — per file group rewritten at once — the prior (the group's
   * `executorMemory / executorCores`), the fit from measured peaks and out-of-memory runs, and
   * its bounds; `samples`: the samples it counted. `sizeJob` uses `fitted` when learned.
   */
  heapPerCore: z
    .object({
      prior: amount,
      fitted: amount,
      min: amount,
      max: amount,
      samples: amount,
    })
    .optional(),
  targetRunSeconds: z.number().int().positive(),
  /** When it was fitted (ISO-8601). */
  at: z.iso.datetime(),
});
export type SizingModel = z.output<typeof sizingModelSchema>;

/** The Redis key of a catalog's published sizing model. */
export function sizingModelKey(catalog: string): string {
  return `icepack:sizing:model:${catalog}`;
}
