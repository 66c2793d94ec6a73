import { z } from 'zod';
import { int64, isoDateTime, stringMap } from './primitives.ts';
import { tableIdSchema } from './table-id.ts';

/** Iceberg snapshot operations (a compaction commits `replace`). */
export const SnapshotOperation = {
  append: 'append',
  replace: 'replace',
  overwrite: 'overwrite',
  delete: 'delete',
} as const;
export type SnapshotOperation = (typeof SnapshotOperation)[keyof typeof SnapshotOperation];
export const snapshotOperationSchema = z.enum(SnapshotOperation);

/**
 * "This table changed" from any writer (Spark, Flink, Kafka Connect, a script). Only the
 * table is required. Unknown fields are ignored (writers we do not control add their
 * own); known fields must have the right type. `snapshotId` may be a safe-integer number
 * from a foreign writer and is normalised to its decimal string.
 */
export const commitEventSchema = z.object({
  table: tableIdSchema,
  snapshotId: int64.optional(),
  operation: snapshotOperationSchema.optional(),
  summary: stringMap.optional(),
  committedAt: isoDateTime.optional(),
  metadataLocation: z.string().min(1).optional(),
});
export type CommitEvent = z.output<typeof commitEventSchema>;
