import type { Binding } from './binding.ts';
import type { SessionTail } from './session-tail.ts';
import type { TableId } from './table-id.ts';
import type { TableState } from './table-state.ts';
import { taskJobId, type Task } from './task.ts';

/**
 * Valid example values, for tests and docs across packages. Each call returns a fresh
 * object; pass overrides for the fields a test is about.
 */
export function sampleTableId(overrides: Partial<TableId> = {}): TableId {
  return { catalog: 'prod', namespace: ['sales'], name: 'orders', ...overrides };
}

const MiB = 1024 * 1024;

export function sampleTableState(overrides: Partial<TableState> = {}): TableState {
  return {
    table: sampleTableId(),
    scannedAt: '2026-01-01T12:00:00.000Z',
    metadataLocation: 's3://warehouse/sales/orders/metadata/00042-6b1a.metadata.json',
    formatVersion: 2,
    tableUuid: 'f79c3e09-8dc7-4b5c-9f3a-2d6c2e5d9c11',
    currentSnapshotId: '6716213459318430795',
    lastSequenceNumber: '42',
    properties: { 'write.target-file-size-bytes': String(512 * MiB) },
    partitionSpec: {
      specId: 0,
      fields: [{ sourceId: 3, fieldId: 1000, name: 'order_date_day', transform: 'day' }],
    },
    sortOrder: {
      orderId: 1,
      fields: [
        {
          sourceId: 1,
          column: 'customer_id',
          transform: 'identity',
          direction: 'asc',
          nullOrder: 'nulls-first',
        },
      ],
    },
    files: {
      dataFiles: 120,
      dataBytes: 4_000 * MiB,
      records: 10_000_000,
      smallFiles: 80,
      smallFileBytes: 400 * MiB,
      smallFileThresholdBytes: 384 * MiB,
      positionDeleteFiles: 12,
      equalityDeleteFiles: 0,
      deletionVectors: 0,
      deleteFileBytes: 3 * MiB,
      positionDeleteRecords: 5_000,
      equalityDeleteRecords: 0,
      danglingDeletes: { positionDeleteFiles: 0, equalityDeleteFiles: 0, deletionVectors: 0 },
    },
    sizeHistogram: [
      { upperBoundBytes: 16 * MiB, files: 60, bytes: 200 * MiB },
      { upperBoundBytes: 384 * MiB, files: 20, bytes: 200 * MiB },
      { upperBoundBytes: null, files: 40, bytes: 3_600 * MiB },
    ],
    snapshots: {
      total: 60,
      sinceLastExpire: 55,
      sinceLastRewrite: 30,
      oldestAt: '2025-12-20T00:00:00.000Z',
      newestAt: '2026-01-01T11:59:00.000Z',
    },
    newData: {
      sinceSnapshotId: '3051729675574597004',
      files: 80,
      records: 2_000_000,
      bytes: 400 * MiB,
      share: 0.1,
    },
    refs: [{ name: 'main', type: 'branch', snapshotId: '6716213459318430795' }],
    partitions: [
      {
        specId: 0,
        partition: { order_date_day: '2026-01-01' },
        dataFiles: 50,
        smallFiles: 48,
        deleteFiles: 12,
        bytes: 180 * MiB,
      },
    ],
    lastMaintenance: { cleanup: '2025-12-31T00:00:00.000Z' },
    ...overrides,
  };
}

export function sampleMergeTask(overrides: Partial<Extract<Task, { type: 'merge' }>> = {}): Task {
  const table = overrides.table ?? sampleTableId();
  return {
    id: taskJobId(table, 'merge'),
    table,
    type: 'merge',
    parameters: {
      targetFileSizeBytes: 512 * MiB,
      minFileSizeBytes: 384 * MiB,
      maxFileSizeBytes: 922 * MiB,
      minInputFiles: 5,
      deleteFileThreshold: 1,
      rewritePositionDeletes: true,
    },
    score: {
      priority: 2_097_011,
      total: 140,
      parts: [
        { factor: 'base', value: 1, points: 100 },
        { factor: 'small-files', value: 80, threshold: 20, points: 40 },
      ],
    },
    createdAt: '2026-01-01T12:00:01.000Z',
    state: {
      tableUuid: 'f79c3e09-8dc7-4b5c-9f3a-2d6c2e5d9c11',
      metadataLocation: 's3://warehouse/sales/orders/metadata/00042-6b1a.metadata.json',
      snapshotId: '6716213459318430795',
      bytesToRewrite: 403 * MiB,
      filesToRewrite: 92,
    },
    ...overrides,
  };
}

export function sampleBinding(overrides: Partial<Binding> = {}): Binding {
  return {
    catalog: 'prod',
    group: 'prod',
    namespace: 'icepack-prod',
    slots: 2,
    smallSlots: 1,
    cpu: '8',
    memory: '32Gi',
    spark: {
      driverCores: 1,
      driverMemory: '2g',
      executorCores: 2,
      executorMemory: '4g',
      maxExecutors: 4,
      sparkConf: {},
    },
    state: 'ready',
    runner: 'local',
    updatedAt: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}

/** A resident session's idle tail (ADR 0046): 30 s idle on 3 cores after a merge of the sample table. */
export function sampleSessionTail(overrides: Partial<SessionTail> = {}): SessionTail {
  const table = overrides.table ?? sampleTableId();
  return {
    taskId: taskJobId(table, 'merge'),
    table,
    taskType: 'merge',
    runId: 'batch-3f9c2a1b7d4e5f60-a1',
    at: '2026-12-04T23:00:31.000Z',
    idleMs: 30_000,
    cost: { runMs: 30_000, coreSecondsRequested: 90 },
    ...overrides,
  };
}
