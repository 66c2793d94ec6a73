import { parseSparkMemoryBytes, type SparkSettings, type Task } from '@icepack/types';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/**
 * The knobs of the sizing formula (docs/dispatcher.md). Each default is documented; tests
 * and operators may override them.
 */
export interface SizingOptions {
  /** Input bytes one executor core rewrites in a reasonable time. Default 2 GiB. */
  readonly bytesPerCore?: number;
  /** Input files one executor core handles (open/plan/commit cost). Default 500. */
  readonly filesPerCore?: number;
  /** Driver memory for a job of up to `filesPerDriverStep` files. Default 1 GiB. */
  readonly baseDriverMemoryBytes?: number;
  /** The driver gets `baseDriverMemoryBytes` more per this many files. Default 50,000. */
  readonly filesPerDriverStep?: number;
  /** Smallest executor heap. Default 1 GiB. */
  readonly minExecutorMemoryBytes?: number;
  /**
   * Executor heap per executor core — a core rewrites one file group at a time, so this is
   * the heap a file group gets. Default: the group's `executorMemory / executorCores`; the
   * learned sizing sets it from measured runs (ADR 0026). The group's `executorMemory` stays
   * the bound.
   */
  readonly executorHeapPerCoreBytes?: number;
}

type Defaulted = Required<Omit<SizingOptions, 'executorHeapPerCoreBytes'>> &
  Pick<SizingOptions, 'executorHeapPerCoreBytes'>;

/** Today's constants: the formula's defaults and the learned sizing's prior. */
export const DEFAULT_SIZING: Required<Omit<SizingOptions, 'executorHeapPerCoreBytes'>> = {
  bytesPerCore: 2 * GiB,
  filesPerCore: 500,
  baseDriverMemoryBytes: GiB,
  filesPerDriverStep: 50_000,
  minExecutorMemoryBytes: GiB,
};

/**
 * The files per file group a task's job forms (`SizingInput.minInputFiles`): a merge's or
 * sort's `minInputFiles`; 1 for a cleanup; for orphans all its files, one group (it lists and
 * reads the reachable set in one pass, with no file groups to run side by side).
 */
export function minInputFilesOf(task: Task): number {
  switch (task.type) {
    case 'cleanup':
      return 1;
    case 'orphans':
      return Math.max(1, task.state.filesToRewrite);
    case 'merge':
    case 'sort':
      return task.parameters.minInputFiles;
  }
}

/** The smallest file a task's job rewrites; undefined for types that rewrite nothing. */
export function minFileSizeOf(task: Task): number | undefined {
  return task.type === 'merge' || task.type === 'sort'
    ? task.parameters.minFileSizeBytes
    : undefined;
}

/** Free room in the namespace quota (hard − used). `undefined` fields are unlimited. */
export interface QuotaRoom {
  readonly cpuMillicores?: number;
  readonly memoryBytes?: number;
}

export interface SizingInput {
  /** Bytes the task will rewrite (the planner's `state.bytesToRewrite`). */
  readonly bytes: number;
  /** Files the task will rewrite (`state.filesToRewrite`). */
  readonly files: number;
  /** Files per file group at least (`minInputFiles`); 1 for a cleanup. */
  readonly minInputFiles: number;
  /** The group's Spark settings: the upper bounds. */
  readonly spark: SparkSettings;
  /** Free room in the quota now. */
  readonly room: QuotaRoom;
  /**
   * Factors for an attempt after one that ran out of memory or time (`domain/resource-failure.ts`):
   * on the memory and on the cores wanted, still within the group's settings. Default 1 and 1.
   */
  readonly grow?: { readonly memory: number; readonly cores: number };
}

export interface PodSize {
  readonly cores: number;
  /** Spark memory string in MiB, e.g. `2048m`. */
  readonly memory: string;
  readonly memoryBytes: number;
}

export interface JobSize {
  readonly driver: PodSize;
  readonly executor: PodSize & { readonly instances: number };
  readonly maxConcurrentFileGroupRewrites: number;
  /** What the job's pods request from the quota (memory includes Spark's overhead). */
  readonly request: { readonly cpuMillicores: number; readonly memoryBytes: number };
}

export type SizingDecision =
  | { readonly fits: true; readonly size: JobSize }
  | { readonly fits: false; readonly size: JobSize; readonly reason: string };

/** Spark on Kubernetes adds max(10 %, 384 MiB) to each pod's memory request. */
export function podMemoryBytes(heapBytes: number): number {
  return heapBytes + Math.max(Math.ceil(heapBytes * 0.1), 384 * MiB);
}

function pod(cores: number, memoryBytes: number): PodSize {
  const mib = Math.max(1, Math.ceil(memoryBytes / MiB));
  return { cores, memory: `${String(mib)}m`, memoryBytes: mib * MiB };
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(Math.max(value, min), max);
}

function shape(
  input: SizingInput,
  opts: Defaulted,
  instances: number,
  coresWanted: number,
): JobSize {
  const { spark } = input;
  const perCoreMemory =
    opts.executorHeapPerCoreBytes ??
    parseSparkMemoryBytes(spark.executorMemory) / spark.executorCores;
  // One executor: only as many cores as the work needs. Several: the group's full shape.
  const executorCores =
    instances === 1 ? Math.min(spark.executorCores, coresWanted) : spark.executorCores;
  const memoryGrowth = input.grow?.memory ?? 1;
  const executorMemory = clamp(
    perCoreMemory * executorCores * memoryGrowth,
    Math.min(opts.minExecutorMemoryBytes, parseSparkMemoryBytes(spark.executorMemory)),
    parseSparkMemoryBytes(spark.executorMemory),
  );
  const driverSteps = 1 + Math.floor(input.files / opts.filesPerDriverStep);
  const driverMemory = Math.min(
    opts.baseDriverMemoryBytes * driverSteps * memoryGrowth,
    parseSparkMemoryBytes(spark.driverMemory),
  );
  const driver = pod(spark.driverCores, driverMemory);
  const executor = { ...pod(executorCores, executorMemory), instances };
  const groups = Math.max(1, Math.floor(input.files / Math.max(1, input.minInputFiles)));
  return {
    driver,
    executor,
    maxConcurrentFileGroupRewrites: clamp(groups, 1, executorCores * instances),
    request: {
      cpuMillicores: (driver.cores + executor.cores * instances) * 1000,
      memoryBytes:
        podMemoryBytes(driver.memoryBytes) + podMemoryBytes(executor.memoryBytes) * instances,
    },
  };
}

function fitsRoom(size: JobSize, room: QuotaRoom): boolean {
  return (
    (room.cpuMillicores === undefined || size.request.cpuMillicores <= room.cpuMillicores) &&
    (room.memoryBytes === undefined || size.request.memoryBytes <= room.memoryBytes)
  );
}

/**
 * Sizes a Spark job from the work it will do, within the group's settings and the quota's
 * free room. Pure. See docs/dispatcher.md for the formula.
 */
export function sizeJob(input: SizingInput, options: SizingOptions = {}): SizingDecision {
  const opts: Defaulted = { ...DEFAULT_SIZING, ...options };
  const coresWanted = Math.ceil(
    Math.max(
      1,
      Math.ceil(input.bytes / opts.bytesPerCore),
      Math.ceil(input.files / opts.filesPerCore),
    ) * (input.grow?.cores ?? 1),
  );
  const wanted = clamp(
    Math.ceil(coresWanted / input.spark.executorCores),
    1,
    input.spark.maxExecutors,
  );
  // Fewer executors when the quota has less room: a smaller job now beats a bigger one later.
  for (let instances = wanted; instances >= 1; instances -= 1) {
    const size = shape(input, opts, instances, coresWanted);
    if (fitsRoom(size, input.room)) return { fits: true, size };
  }
  const smallest = shape(input, opts, 1, coresWanted);
  const cpu = smallest.request.cpuMillicores;
  const memoryMiB = Math.ceil(smallest.request.memoryBytes / MiB);
  return {
    fits: false,
    size: smallest,
    reason: `quota has room for cpu ${input.room.cpuMillicores === undefined ? '∞' : `${String(input.room.cpuMillicores)}m`}, memory ${input.room.memoryBytes === undefined ? '∞' : `${String(Math.floor(input.room.memoryBytes / MiB))}Mi`}; the smallest job needs cpu ${String(cpu)}m, memory ${String(memoryMiB)}Mi`,
  };
}
