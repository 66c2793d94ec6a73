import { taskJobId, type Task } from '@icepack/types';
import type { DispatchTruth } from './dispatch-tables.ts';

const MiB = 1024 * 1024;

function base(truth: DispatchTruth, type: Task['type']) {
  return {
    id: taskJobId(truth.id, type),
    table: truth.id,
    score: { priority: 10, total: 100, parts: [] },
    createdAt: new Date().toISOString(),
    state: {
      tableUuid: truth.tableUuid,
      metadataLocation: truth.metadataLocation,
      snapshotId: truth.currentSnapshotId,
      bytesToRewrite: truth.dataFiles.bytes,
      filesToRewrite: truth.dataFiles.count,
    },
  };
}

const sizes = {
  targetFileSizeBytes: 128 * MiB,
  minFileSizeBytes: 96 * MiB,
  maxFileSizeBytes: 230 * MiB,
  deleteFileThreshold: 10,
  rewritePositionDeletes: true,
};

export function mergeTask(truth: DispatchTruth, minInputFiles = 2): Task {
  return { ...base(truth, 'merge'), type: 'merge', parameters: { ...sizes, minInputFiles } };
}

export function sortTask(
  truth: DispatchTruth,
  strategy: 'sort' | 'zorder',
  columns: { name: string; direction?: 'asc' | 'desc'; nullOrder?: 'nulls-first' | 'nulls-last' }[],
): Task {
  return {
    ...base(truth, 'sort'),
    type: 'sort',
    parameters: {
      ...sizes,
      minInputFiles: 2,
      strategy,
      columns: columns.map((c) => ({
        name: c.name,
        direction: c.direction ?? 'asc',
        nullOrder: c.nullOrder ?? 'nulls-first',
      })),
    },
  };
}

export function cleanupTask(truth: DispatchTruth, retainLast: number, olderThan: Date): Task {
  return {
    ...base(truth, 'cleanup'),
    type: 'cleanup',
    parameters: { olderThan: olderThan.toISOString(), retainLast },
  };
}
