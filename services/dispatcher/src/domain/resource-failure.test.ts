import { SPARK_DEFAULTS, type SparkSettings, type TaskError } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { NO_GROWTH, OUT_OF_MEMORY_KIND, resourceStep } from './resource-failure.ts';
import { afterFailedRun } from './retry.ts';
import { sizeJob, type JobSize } from './sizing.ts';

const GiB = 2 ** 30;
const spark: SparkSettings = { ...SPARK_DEFAULTS, sparkConf: {} };
const oom: TaskError = { kind: OUT_OF_MEMORY_KIND, message: 'Java heap space', retryable: true };
const timeout: TaskError = { kind: 'timeout', message: 'cancelled after 21600s', retryable: false };
const settings = { maxAttempts: 3, backoffMs: 30_000 };

function size(bytes: number, grow = NO_GROWTH, files = 40): JobSize {
  return sizeJob({ bytes, files, minInputFiles: 5, spark, room: {}, grow }).size;
}

describe('resourceStep and the retry after a run out of memory or time', () => {
  it('out of memory: the next attempt gets twice the executor and driver memory', () => {
    const first = size(GiB);
    const step = resourceStep(oom, first, spark, NO_GROWTH);
    expect(step).toMatchObject({ action: 'grow', grow: { memory: 2, cores: 1 } });
    const next = size(GiB, step?.action === 'grow' ? step.grow : NO_GROWTH);
    expect(next.executor.memoryBytes).toBe(2 * first.executor.memoryBytes);
    expect(next.driver.memoryBytes).toBe(2 * first.driver.memoryBytes);
    expect(next.executor.cores).toBe(first.executor.cores);
    expect(afterFailedRun(oom, 1, settings, step)).toEqual({
      action: 'retry',
      delayMs: 30_000,
      reason:
        'retry 2 of 3 in 30s: out of memory with executor 2048m, driver 1024m: twice the memory',
    });
  });

  it('never past the group’s memory, and gives up saying so when already there', () => {
    const grown = size(GiB, { memory: 16, cores: 1 });
    expect(grown.executor.memory).toBe('4096m');
    expect(grown.driver.memory).toBe('2048m');
    const step = resourceStep(oom, grown, spark, { memory: 16, cores: 1 });
    expect(step?.action).toBe('at-bound');
    const decision = afterFailedRun(oom, 1, settings, step);
    expect(decision).toEqual({
      action: 'give-up',
      error: {
        kind: OUT_OF_MEMORY_KIND,
        retryable: false,
        message: "Java heap space (out of memory at the group's most (executor 4g, driver 2g))",
      },
    });
  });

  it('timed out: retried (a timeout alone is not) with twice the cores, up to the group’s most', () => {
    const first = size(10 * GiB); // 5 cores wanted: 3 executors of 2
    const step = resourceStep(timeout, first, spark, NO_GROWTH);
    expect(step).toMatchObject({ action: 'grow', grow: { memory: 1, cores: 2 } });
    expect(afterFailedRun(timeout, 1, settings)).toEqual({ action: 'give-up', error: timeout });
    expect(afterFailedRun(timeout, 1, settings, step).action).toBe('retry');
    const next = size(10 * GiB, { memory: 1, cores: 2 });
    expect(next.executor.instances).toBe(spark.maxExecutors);
    expect(resourceStep(timeout, next, spark, { memory: 1, cores: 2 })).toMatchObject({
      action: 'at-bound',
      reason: "timed out at the group's most cores (4 × 2)",
    });
  });

  it('leaves other failures to their own retryability, and the attempts still count', () => {
    const conflict: TaskError = { kind: 'commit-conflict', message: 'x', retryable: true };
    expect(resourceStep(conflict, size(GiB), spark, NO_GROWTH)).toBeUndefined();
    const step = resourceStep(oom, size(GiB), spark, NO_GROWTH);
    expect(afterFailedRun(oom, 3, settings, step)).toEqual({ action: 'give-up', error: oom });
  });
});
