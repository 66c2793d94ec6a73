// The table states of the planner benchmarks with partition-level input (issue 17 point 6):
// what the scanner sends for a table of many day partitions.
import {
  MAX_TABLE_STATE_PARTITIONS,
  sampleTableId,
  type PartitionState,
  type TableState,
} from '@icepack/types';
import { partitionedTableState } from '@icepack/planner/testing';

/**
 * `tables` tables of `partitions` day partitions each, the scanner's top 100 by need listed,
 * with totals; `seq` orders the states of a table (a higher one is newer).
 */
export function partitionStates(
  catalog: string,
  seq: number,
  smallFiles: number,
  tables: number,
  partitions: number,
): TableState[] {
  const listed = Math.min(partitions, MAX_TABLE_STATE_PARTITIONS);
  const GiB = 1024 ** 3;
  return Array.from({ length: tables }, (_, t) => {
    const parts: PartitionState[] = Array.from({ length: listed }, (_, i) => ({
      specId: 1,
      partition: {
        region: 'eu',
        ts_day: new Date(Date.UTC(2026, 0, 1) - i * 86_400_000).toISOString().slice(0, 10),
      },
      dataFiles: smallFiles + 10,
      smallFiles,
      deleteFiles: 0,
      bytes: 2 * GiB,
      // 100 listed × 1 GiB = the default 100 GiB per task: one group, as many tasks as before.
      smallFileBytes: GiB,
      deleteFileBytes: 0,
      lastSequenceNumber: String(seq * 1000 - i),
      lastChangedAt: new Date(Date.UTC(2026, 0, 10, 0, seq) - i * 60_000).toISOString(),
    }));
    const base = partitionedTableState(parts);
    return {
      ...base,
      table: sampleTableId({ catalog, namespace: ['db', `ns${t % 50}`], name: `t${t}` }),
      properties: {},
      files: { ...base.files, smallFiles: smallFiles * listed, positionDeleteFiles: 12 },
      snapshots: {
        ...base.snapshots,
        total: 60 + seq,
        expiry: {
          mainOnly: 60 + seq,
          oldestMainOnlyAt: '2025-12-20T00:00:00.000Z',
          unreferenced: 0,
        },
      },
      lastSequenceNumber: String(seq),
      metadataLocation: `s3://warehouse/db/t${t}/metadata/${seq}.metadata.json`,
      scannedAt: new Date(Date.UTC(2026, 0, 1, 0, seq)).toISOString(),
      partitionTotals: { partitions, needingWork: partitions, listed },
    };
  });
}
