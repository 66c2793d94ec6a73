import { z } from 'zod';
import { int64 } from '../primitives.ts';

const timestampMs = z.int();

/** Snapshot summary: all values are strings; `operation` is required. */
export const snapshotSummarySchema = z
  .object({ operation: z.enum(['append', 'replace', 'overwrite', 'delete']) })
  .catchall(z.string());
export type IcebergSnapshotSummary = z.output<typeof snapshotSummarySchema>;

/**
 * One snapshot. Ids and sequence numbers are exact decimal strings (parse the JSON with
 * `parseJsonExact`). Java omits `sequence-number` when it is 0 (v1 and upgraded tables),
 * and v1 snapshots may list `manifests` instead of a `manifest-list`.
 */
export const snapshotSchema = z.looseObject({
  'snapshot-id': int64,
  'parent-snapshot-id': int64.optional(),
  'sequence-number': int64.optional(),
  'timestamp-ms': timestampMs,
  'manifest-list': z.string().min(1).optional(),
  manifests: z.array(z.string()).optional(),
  summary: snapshotSummarySchema.optional(),
  'schema-id': z.int().min(0).optional(),
  /** v3 row lineage. */
  'first-row-id': int64.optional(),
  'added-rows': int64.optional(),
  /** v3 encryption: id of the key that encrypts the manifest list key metadata. */
  'key-id': z.string().optional(),
});
export type IcebergSnapshot = z.output<typeof snapshotSchema>;

/** v2/v3 snapshots always point to a manifest list and carry a summary. */
export const snapshotV2Schema = snapshotSchema.extend({
  'manifest-list': z.string().min(1),
  summary: snapshotSummarySchema,
});

export const snapshotLogEntrySchema = z.looseObject({
  'snapshot-id': int64,
  'timestamp-ms': timestampMs,
});

export const metadataLogEntrySchema = z.looseObject({
  'metadata-file': z.string().min(1),
  'timestamp-ms': timestampMs,
});

export const snapshotRefSchema = z.looseObject({
  'snapshot-id': int64,
  type: z.enum(['branch', 'tag']),
  'max-ref-age-ms': z.int().min(0).optional(),
  /** Branches only. */
  'max-snapshot-age-ms': z.int().min(0).optional(),
  /** Branches only. */
  'min-snapshots-to-keep': z.int().min(1).optional(),
});
export type IcebergSnapshotRef = z.output<typeof snapshotRefSchema>;
