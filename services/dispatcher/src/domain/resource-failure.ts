// What a run that ran out of memory or out of time means for the next attempt (issue 18,
// ADR 0026): the same job again would fail the same way, so it gets more memory or more
// cores, within the group's Spark settings. Pure; `domain/retry.ts` decides the retry with it.
import { parseSparkMemoryBytes, type SparkSettings, type TaskError } from '@icepack/types';
import type { JobSize } from './sizing.ts';

/** The error kind of a run that ran out of memory (the job's, or its pod's OOM kill). */
export const OUT_OF_MEMORY_KIND = 'out-of-memory';

/** Factors on the sized job for an attempt: 1 = as sized, 2 = twice. */
export interface Growth {
  /** On the executor heap (up to `executorMemory`) and the driver's (up to `driverMemory`). */
  readonly memory: number;
  /** On the cores the work wants (up to `executorCores` × `maxExecutors`). */
  readonly cores: number;
}

export const NO_GROWTH: Growth = { memory: 1, cores: 1 };

export type ResourceStep =
  | { readonly action: 'grow'; readonly grow: Growth; readonly reason: string }
  | { readonly action: 'at-bound'; readonly reason: string };

const MiB = 1024 * 1024;
const mib = (bytes: number): string => `${String(Math.round(bytes / MiB))}m`;

/**
 * For a run that failed for lack of resources: out of memory → twice the memory, timed out →
 * twice the cores, for the next attempt; `at-bound` when the failed run already had what the
 * group allows (more of the same cannot help). Undefined for any other failure.
 * `size`: the failed attempt's job as sized without quota limits.
 */
export function resourceStep(
  error: TaskError,
  size: JobSize,
  spark: SparkSettings,
  current: Growth,
): ResourceStep | undefined {
  if (error.kind === OUT_OF_MEMORY_KIND) {
    const executorMax = parseSparkMemoryBytes(spark.executorMemory);
    const driverMax = parseSparkMemoryBytes(spark.driverMemory);
    if (size.executor.memoryBytes >= executorMax && size.driver.memoryBytes >= driverMax) {
      return {
        action: 'at-bound',
        reason: `out of memory at the group's most (executor ${spark.executorMemory}, driver ${spark.driverMemory})`,
      };
    }
    return {
      action: 'grow',
      grow: { ...current, memory: current.memory * 2 },
      reason: `out of memory with executor ${mib(size.executor.memoryBytes)}, driver ${mib(size.driver.memoryBytes)}: twice the memory`,
    };
  }
  if (error.kind === 'timeout') {
    const cores = size.executor.cores * size.executor.instances;
    if (
      size.executor.instances >= spark.maxExecutors &&
      size.executor.cores >= spark.executorCores
    ) {
      return {
        action: 'at-bound',
        reason: `timed out at the group's most cores (${String(spark.maxExecutors)} × ${String(spark.executorCores)})`,
      };
    }
    return {
      action: 'grow',
      grow: { ...current, cores: current.cores * 2 },
      reason: `timed out with ${String(cores)} executor cores: twice the cores`,
    };
  }
  return undefined;
}
