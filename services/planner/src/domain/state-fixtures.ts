// Table states for tests and benchmarks: a healthy table, with the figures a test is about overridden.
import { sampleTableState, type PartitionState, type TableState } from '@icepack/types';

export interface StateFigures {
  readonly smallFiles?: number;
  readonly positionDeleteFiles?: number;
  readonly equalityDeleteFiles?: number;
  readonly deletionVectors?: number;
  readonly snapshots?: number;
  /** Commit time of the oldest snapshot (all on main's lineage); default 2025-12-20. */
  readonly oldestSnapshotAt?: string;
  readonly newDataFiles?: number;
  readonly newDataShare?: number;
  readonly sorted?: boolean;
}

/**
 * A table no rule fires for (0 small files, 0 deletes, 1 snapshot from 2025-12-20 on main, no
 * new data, no maintenance yet) unless overridden.
 */
export function tableState(
  figures: StateFigures = {},
  overrides: Partial<TableState> = {},
): TableState {
  const base = sampleTableState();
  const newFiles = figures.newDataFiles ?? 0;
  return {
    ...base,
    properties: {},
    files: {
      ...base.files,
      smallFiles: figures.smallFiles ?? 0,
      positionDeleteFiles: figures.positionDeleteFiles ?? 0,
      equalityDeleteFiles: figures.equalityDeleteFiles ?? 0,
      deletionVectors: figures.deletionVectors ?? 0,
    },
    snapshots: {
      total: figures.snapshots ?? 1,
      sinceLastRewrite: base.snapshots.sinceLastRewrite,
      oldestAt: figures.oldestSnapshotAt ?? '2025-12-20T00:00:00.000Z',
      newestAt: base.snapshots.newestAt,
      expiry: {
        mainOnly: figures.snapshots ?? 1,
        oldestMainOnlyAt: figures.oldestSnapshotAt ?? '2025-12-20T00:00:00.000Z',
        unreferenced: 0,
      },
    },
    newData: {
      ...base.newData,
      files: newFiles,
      bytes: newFiles * 1024 * 1024,
      share: figures.newDataShare ?? 0,
    },
    sortOrder: figures.sorted === false ? { orderId: 0, fields: [] } : base.sortOrder,
    lastMaintenance: {},
    ...overrides,
  };
}

const GiB = 1024 ** 3;

/** The clock of the partition fixtures below. */
export const PARTITIONS_NOW = new Date('2026-01-10T00:00:00.000Z');

/** A day partition changed `daysAgo` before `PARTITIONS_NOW` (sequence number grows with recency). */
export function dayPartition(
  date: string,
  daysAgo: number,
  figures: Partial<PartitionState> = {},
  region = 'eu',
): PartitionState {
  return {
    specId: 1,
    partition: { region, ts_day: date },
    dataFiles: 30,
    smallFiles: 20,
    deleteFiles: 0,
    bytes: 3 * GiB,
    smallFileBytes: 1 * GiB,
    deleteFileBytes: 0,
    lastSequenceNumber: String(1000 - daysAgo),
    lastChangedAt: new Date(PARTITIONS_NOW.getTime() - daysAgo * 86_400_000).toISOString(),
    ...figures,
  };
}

/** A table partitioned by region and day(ts), after an evolution from region alone (spec 0). */
export function partitionedTableState(partitions: PartitionState[]): TableState {
  return tableState(
    { smallFiles: 200, newDataFiles: 40, newDataShare: 0.1 },
    {
      partitionSpec: {
        specId: 1,
        fields: [
          { sourceId: 2, fieldId: 1000, name: 'region', transform: 'identity', column: 'region' },
          { sourceId: 3, fieldId: 1001, name: 'ts_day', transform: 'day', column: 'ts' },
        ],
      },
      otherPartitionSpecs: [
        {
          specId: 0,
          fields: [
            { sourceId: 2, fieldId: 1000, name: 'region', transform: 'identity', column: 'region' },
          ],
        },
      ],
      partitions,
      partitionTotals: {
        partitions: partitions.length,
        needingWork: partitions.length,
        listed: partitions.length,
      },
    },
  );
}
