import { describe, expect, it } from 'vitest';
import {
  sampleMergeTask,
  SPARK_DEFAULTS,
  taskJobId,
  type SparkSettings,
  type Task,
} from '@icepack/types';
import {
  minFileSizeOf,
  minInputFilesOf,
  podMemoryBytes,
  sizeJob,
  type QuotaRoom,
} from './sizing.ts';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const spark: SparkSettings = { ...SPARK_DEFAULTS, sparkConf: {} };
const unlimited: QuotaRoom = {};

describe('sizeJob', () => {
  it.each([
    // name, bytes, files, → executors, executor cores, executor memory, driver memory, groups
    ['tiny table: one small executor', 10 * MiB, 30, 1, 1, '2048m', '1024m', 1],
    ['2 GiB: still one core', 2 * GiB, 40, 1, 1, '2048m', '1024m', 1],
    ['3 GiB: one full executor', 3 * GiB, 40, 1, 2, '4096m', '1024m', 2],
    ['10 GiB: three executors', 10 * GiB, 200, 3, 2, '4096m', '1024m', 6],
    ['1 TiB: capped at maxExecutors', 1024 * GiB, 9_000, 4, 2, '4096m', '1024m', 8],
    ['many files, few bytes: cores for the files', 100 * MiB, 1_600, 2, 2, '4096m', '1024m', 4],
    ['120k files: driver grows to the cap', 10 * GiB, 120_000, 4, 2, '4096m', '2048m', 8],
  ])('%s', (_name, bytes, files, instances, cores, memory, driverMemory, groups) => {
    const decision = sizeJob({ bytes, files, minInputFiles: 5, spark, room: unlimited });
    expect(decision.fits).toBe(true);
    const { size } = decision;
    expect(size.executor.instances).toBe(instances);
    expect(size.executor.cores).toBe(cores);
    expect(size.executor.memory).toBe(memory);
    expect(size.driver.memory).toBe(driverMemory);
    expect(size.driver.cores).toBe(1);
    expect(size.maxConcurrentFileGroupRewrites).toBe(groups);
  });

  it('never exceeds the group settings', () => {
    const group: SparkSettings = {
      ...spark,
      executorCores: 4,
      executorMemory: '8g',
      maxExecutors: 2,
      driverMemory: '1g',
    };
    const { size } = sizeJob({
      bytes: 100 * GiB,
      files: 500_000,
      minInputFiles: 1,
      spark: group,
      room: unlimited,
    });
    expect(size.executor.instances).toBe(2);
    expect(size.executor.cores).toBe(4);
    expect(size.executor.memoryBytes).toBe(8 * GiB);
    expect(size.driver.memoryBytes).toBe(GiB);
    expect(size.maxConcurrentFileGroupRewrites).toBe(8);
  });

  it('gives each core the learned heap per file group, within the group’s executor memory', () => {
    const input = { bytes: 10 * GiB, files: 200, minInputFiles: 5, spark, room: unlimited };
    const learned = (perCore: number) =>
      sizeJob(input, { executorHeapPerCoreBytes: perCore }).size.executor.memoryBytes;
    // Default group: 4g over 2 cores. Measured runs needed 768 MiB a core: 1.5 GiB an executor.
    expect(learned(768 * MiB)).toBe(1536 * MiB);
    // Never under the smallest executor heap, never over the group's executor memory.
    expect(learned(100 * MiB)).toBe(GiB);
    expect(learned(8 * GiB)).toBe(4 * GiB);
    // A smaller heap asks the quota for less.
    expect(
      sizeJob(input, { executorHeapPerCoreBytes: 768 * MiB }).size.request.memoryBytes,
    ).toBeLessThan(sizeJob(input).size.request.memoryBytes);
  });

  it('shrinks to the executors the quota has room for', () => {
    // Room for the driver and two executors, not three.
    const room: QuotaRoom = { cpuMillicores: 5_000, memoryBytes: 64 * GiB };
    const decision = sizeJob({ bytes: 10 * GiB, files: 200, minInputFiles: 5, spark, room });
    expect(decision.fits).toBe(true);
    expect(decision.size.executor.instances).toBe(2);
    expect(decision.size.request.cpuMillicores).toBe(5_000);
  });

  it('counts memory overhead against the quota', () => {
    const tiny = sizeJob({ bytes: 0, files: 1, minInputFiles: 1, spark, room: unlimited }).size;
    expect(tiny.request.memoryBytes).toBe(podMemoryBytes(GiB) + podMemoryBytes(2 * GiB));
    expect(podMemoryBytes(GiB)).toBe(GiB + 384 * MiB);
    expect(podMemoryBytes(8 * GiB)).toBe(8 * GiB + Math.ceil(0.8 * GiB));
    const justShort: QuotaRoom = {
      cpuMillicores: 10_000,
      memoryBytes: tiny.request.memoryBytes - 1,
    };
    const decision = sizeJob({ bytes: 0, files: 1, minInputFiles: 1, spark, room: justShort });
    expect(decision.fits).toBe(false);
    if (!decision.fits) expect(decision.reason).toMatch(/smallest job needs cpu 2000m/);
  });

  it('does not fit when the quota has no cpu left', () => {
    const decision = sizeJob({
      bytes: GiB,
      files: 10,
      minInputFiles: 5,
      spark,
      room: { cpuMillicores: 1_500, memoryBytes: 100 * GiB },
    });
    expect(decision.fits).toBe(false);
    expect(decision.size.executor.instances).toBe(1);
  });

  it('fits exactly at the limit', () => {
    const need = sizeJob({ bytes: 0, files: 1, minInputFiles: 1, spark, room: unlimited }).size
      .request;
    const decision = sizeJob({ bytes: 0, files: 1, minInputFiles: 1, spark, room: need });
    expect(decision.fits).toBe(true);
  });
});

describe('what each task type sizes by', () => {
  const merge = sampleMergeTask();
  const orphans: Task = {
    ...merge,
    id: taskJobId(merge.table, 'orphans'),
    type: 'orphans',
    parameters: { olderThan: merge.createdAt, quarantineWindowMs: 0, maxFiles: 10 },
    state: { ...merge.state, bytesToRewrite: 0, filesToRewrite: 1_600 },
  };

  it('an orphans task is one group over its files and rewrites no file size', () => {
    expect(minInputFilesOf(orphans)).toBe(1_600);
    expect(minFileSizeOf(orphans)).toBeUndefined();
    if (merge.type !== 'merge') throw new Error('sample is a merge');
    expect(minInputFilesOf(merge)).toBe(merge.parameters.minInputFiles);
    expect(minFileSizeOf(merge)).toBe(merge.parameters.minFileSizeBytes);
    // Cores for the files it reads the reachable set from; no concurrent file groups.
    const decision = sizeJob({
      bytes: 0,
      files: orphans.state.filesToRewrite,
      minInputFiles: minInputFilesOf(orphans),
      spark,
      room: unlimited,
    });
    expect(decision.size.maxConcurrentFileGroupRewrites).toBe(1);
    expect(decision.size.executor.instances).toBe(2);
  });
});
