import { z } from 'zod';
import { parseWith } from './validation-error.ts';
import { count, int64String, isoDateTime, stringMap } from './primitives.ts';
import { tableIdSchema } from './table-id.ts';

const share = z.number().min(0).max(1);

export const partitionFieldStateSchema = z.object({
  sourceId: z.int().min(0),
  fieldId: z.int().min(0),
  name: z.string().min(1),
  /** Iceberg transform text: `identity`, `day`, `bucket[16]`, `truncate[4]`, `void` … */
  transform: z.string().min(1),
  /** The source column's name in the current schema, when it still exists (absent in older states). */
  column: z.string().min(1).optional(),
});

export const partitionSpecStateSchema = z.object({
  specId: z.int().min(0),
  fields: z.array(partitionFieldStateSchema),
});

export const SortDirection = { asc: 'asc', desc: 'desc' } as const;
export type SortDirection = (typeof SortDirection)[keyof typeof SortDirection];
export const NullOrder = { nullsFirst: 'nulls-first', nullsLast: 'nulls-last' } as const;
export type NullOrder = (typeof NullOrder)[keyof typeof NullOrder];

export const sortFieldStateSchema = z.object({
  sourceId: z.int().min(0),
  /** The source column's name in the current schema, when it still exists. */
  column: z.string().min(1).optional(),
  transform: z.string().min(1),
  direction: z.enum(SortDirection),
  nullOrder: z.enum(NullOrder),
});

/** `orderId` 0 with no fields means "unsorted". */
export const sortOrderStateSchema = z.object({
  orderId: z.int().min(0),
  fields: z.array(sortFieldStateSchema),
});

/**
 * Of a snapshot's delete files, those that apply to no live data file any more (the spec's
 * rule on sequence numbers, partitions and referenced data files; docs/iceberg.md). Every
 * reader still opens them; a merge removes them.
 */
export const danglingDeleteFiguresSchema = z.object({
  positionDeleteFiles: count,
  equalityDeleteFiles: count,
  deletionVectors: count,
});

/**
 * Live files of the current snapshot. "Small" means below `smallFileThresholdBytes`. The
 * delete-file counts are every delete file the snapshot tracks; `danglingDeletes` says how
 * many of them apply to no live data file (the others are the live deletes).
 */
export const fileFiguresSchema = z.object({
  dataFiles: count,
  dataBytes: count,
  records: count,
  smallFiles: count,
  smallFileBytes: count,
  /**
   * The bound the scanner measured with: the `minFileSizeBytes` of the policy it resolved
   * (`@icepack/policy`). The planner reports a state measured under another bound than the one
   * in force.
   */
  smallFileThresholdBytes: count,
  positionDeleteFiles: count,
  equalityDeleteFiles: count,
  /** Deletion vectors (v3, puffin blobs), each counted. */
  deletionVectors: count,
  deleteFileBytes: count,
  positionDeleteRecords: count,
  equalityDeleteRecords: count,
  /** Absent in states of scanners before it: read as none. */
  danglingDeletes: danglingDeleteFiguresSchema.default({
    positionDeleteFiles: 0,
    equalityDeleteFiles: 0,
    deletionVectors: 0,
  }),
});

/** Data files by size; buckets ascend, the last has `upperBoundBytes: null` (no bound). */
export const sizeBucketSchema = z.object({
  upperBoundBytes: count.nullable(),
  files: count,
  bytes: count,
});

/**
 * What `expire_snapshots` could remove, before any retention is applied (the planner applies
 * its own): snapshots of the current snapshot's ancestry that no other branch or tag reaches,
 * and snapshots that no branch or tag reaches at all, each with the oldest commit time.
 */
export const expiryFiguresSchema = z.object({
  /** Ancestors of the current snapshot (newest first) that no other branch or tag reaches. */
  mainOnly: count,
  /** Commit time of the oldest of those (the end of the lineage). */
  oldestMainOnlyAt: isoDateTime.optional(),
  /** Snapshots that are not an ancestor of any branch and not a tag. */
  unreferenced: count,
  oldestUnreferencedAt: isoDateTime.optional(),
});

export const snapshotFiguresSchema = z.object({
  total: count,
  /** Snapshots committed since the last snapshot expiry; absent when none is known. */
  sinceLastExpire: count.optional(),
  /** Snapshots committed since the last `replace` snapshot (or since the first). */
  sinceLastRewrite: count,
  oldestAt: isoDateTime.optional(),
  newestAt: isoDateTime.optional(),
  /** Absent in states from before it existed. */
  expiry: expiryFiguresSchema.optional(),
});

/** Data added since the last rewrite: the new-data factor. */
export const newDataSchema = z.object({
  /** The last `replace` snapshot; null when the table was never rewritten. */
  sinceSnapshotId: int64String.nullable(),
  /**
   * That snapshot's sequence number: a partition whose last sequence number is above it was
   * written since (a rewrite's own files keep their starting sequence number, below it).
   * Absent when `sinceSnapshotId` is null and in states from before it.
   */
  sinceSequenceNumber: int64String.optional(),
  files: count,
  records: count,
  bytes: count,
  /** `bytes` / the table's data bytes, 0..1. */
  share,
});

export const RefType = { branch: 'branch', tag: 'tag' } as const;
export type RefType = (typeof RefType)[keyof typeof RefType];

export const refStateSchema = z.object({
  name: z.string().min(1),
  type: z.enum(RefType),
  snapshotId: int64String,
  maxRefAgeMs: count.optional(),
  maxSnapshotAgeMs: count.optional(),
  minSnapshotsToKeep: count.optional(),
});

export const partitionStateSchema = z.object({
  specId: z.int().min(0),
  /** Partition field name → value rendered as text (null for a null value). */
  partition: z.record(z.string(), z.string().nullable()),
  dataFiles: count,
  smallFiles: count,
  deleteFiles: count,
  bytes: count,
  /** Bytes of its small data files (absent in older states). */
  smallFileBytes: count.optional(),
  /** Bytes of its delete files, puffin files counted by blob share (absent in older states). */
  deleteFileBytes: count.optional(),
  /**
   * Its last change: the largest data sequence number of its live files, and when the snapshot
   * of that sequence number was committed (absent when that snapshot was expired or in older
   * states). The planner's "newest first".
   */
  lastSequenceNumber: int64String.optional(),
  lastChangedAt: isoDateTime.optional(),
});

/**
 * Figures over every partition of the table, listed or not: a table with 100,000 partitions
 * lists only the `MAX_TABLE_STATE_PARTITIONS` that need work most, and these say how much is
 * left out.
 */
export const partitionTotalsSchema = z.object({
  /** Partitions with live files (all specs). */
  partitions: count,
  /** Partitions with at least one small data file or delete file. */
  needingWork: count,
  /** Of `partitions`, how many the state lists. */
  listed: count,
});

export const lastMaintenanceSchema = z.object({
  cleanup: isoDateTime.optional(),
  merge: isoDateTime.optional(),
  sort: isoDateTime.optional(),
  orphans: isoDateTime.optional(),
});

/** The most partitions a TableState lists (worst first); keeps messages small. */
export const MAX_TABLE_STATE_PARTITIONS = 100;

/**
 * What the scanner measured about one table at one metadata version: the planner's only
 * input. Published on `icepack.table-state` (compacted, keyed by table) as `TableScanned`.
 */
export const tableStateSchema = z.object({
  table: tableIdSchema,
  scannedAt: isoDateTime,
  metadataLocation: z.string().min(1),
  formatVersion: z.union([z.literal(1), z.literal(2), z.literal(3)]),
  tableUuid: z.string().min(1),
  currentSnapshotId: int64String.nullable(),
  lastSequenceNumber: int64String,
  properties: stringMap,
  partitionSpec: partitionSpecStateSchema,
  sortOrder: sortOrderStateSchema,
  files: fileFiguresSchema,
  sizeHistogram: z.array(sizeBucketSchema),
  snapshots: snapshotFiguresSchema,
  newData: newDataSchema,
  refs: z.array(refStateSchema),
  /**
   * The partitions that need work most first (small files, then delete files), at most
   * `MAX_TABLE_STATE_PARTITIONS`; then, if room is left, the others.
   */
  partitions: z.array(partitionStateSchema).max(MAX_TABLE_STATE_PARTITIONS),
  /** Absent in states of scanners before it. */
  partitionTotals: partitionTotalsSchema.optional(),
  /**
   * The specs of listed partitions other than the current one (a table whose spec evolved),
   * so each partition's fields can be turned into a filter. Absent when none.
   */
  otherPartitionSpecs: z.array(partitionSpecStateSchema).max(MAX_TABLE_STATE_PARTITIONS).optional(),
  lastMaintenance: lastMaintenanceSchema.optional(),
});
export type TableState = z.output<typeof tableStateSchema>;
export type FileFigures = z.output<typeof fileFiguresSchema>;
export type DanglingDeleteFigures = z.output<typeof danglingDeleteFiguresSchema>;
export type SizeBucket = z.output<typeof sizeBucketSchema>;
export type PartitionState = z.output<typeof partitionStateSchema>;
export type PartitionTotals = z.output<typeof partitionTotalsSchema>;
export type PartitionSpecState = z.output<typeof partitionSpecStateSchema>;
export type RefState = z.output<typeof refStateSchema>;

/**
 * The value on `icepack.table-state` for a dropped table: a Kafka tombstone (null value),
 * so compaction eventually removes the key.
 */
export const TABLE_STATE_TOMBSTONE = null;
export type TableStateTombstone = typeof TABLE_STATE_TOMBSTONE;

/** True for a tombstone value (null or empty bytes) read from `icepack.table-state`. */
export function isTombstone(value: Uint8Array | string | null | undefined): boolean {
  return value === null || value === undefined || value.length === 0;
}

/** Validates a TableState; throws `ValidationError` naming the field. */
export function parseTableState(value: unknown): TableState {
  return parseWith(tableStateSchema, value, 'table state');
}
