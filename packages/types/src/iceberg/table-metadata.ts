import { z } from 'zod';
import { parseJsonExact } from '../json-exact.ts';
import { int64, stringMap } from '../primitives.ts';
import { ValidationError, parseWith } from '../validation-error.ts';
import { partitionFieldSchema, partitionSpecSchema, sortOrderSchema } from './partitioning.ts';
import {
  metadataLogEntrySchema,
  snapshotLogEntrySchema,
  snapshotRefSchema,
  snapshotSchema,
  snapshotV2Schema,
} from './snapshots.ts';
import {
  encryptedKeySchema,
  partitionStatisticsFileSchema,
  statisticsFileSchema,
} from './statistics.ts';
import { icebergSchemaSchema } from './types.ts';

// Table metadata as written to `*.metadata.json` (spec "Table Metadata Fields"), keyed
// exactly as the JSON. Unknown keys pass through, so a newer writer's additions survive.

/** Fields every format version may carry. */
const common = {
  location: z.string().min(1),
  'last-updated-ms': z.int(),
  'last-column-id': z.int().min(0),
  properties: stringMap.optional(),
  /** Java writes -1 for "no current snapshot" in older files; kept as written ("-1"). */
  'current-snapshot-id': int64.nullable().optional(),
  'snapshot-log': z.array(snapshotLogEntrySchema).optional(),
  'metadata-log': z.array(metadataLogEntrySchema).optional(),
  refs: z.record(z.string(), snapshotRefSchema).optional(),
  statistics: z.array(statisticsFileSchema).optional(),
  'partition-statistics': z.array(partitionStatisticsFileSchema).optional(),
};

export const tableMetadataV1Schema = z.looseObject({
  ...common,
  'format-version': z.literal(1),
  'table-uuid': z.string().min(1).optional(),
  'last-sequence-number': int64.optional(),
  /** The current schema (v1); newer writers also write `schemas`. */
  schema: icebergSchemaSchema,
  schemas: z.array(icebergSchemaSchema).optional(),
  'current-schema-id': z.int().min(0).optional(),
  /** The current spec's fields (v1); newer writers also write `partition-specs`. */
  'partition-spec': z.array(partitionFieldSchema),
  'partition-specs': z.array(partitionSpecSchema).optional(),
  'default-spec-id': z.int().min(0).optional(),
  'last-partition-id': z.int().min(0).optional(),
  snapshots: z.array(snapshotSchema).optional(),
  'sort-orders': z.array(sortOrderSchema).optional(),
  'default-sort-order-id': z.int().min(0).optional(),
});

const v2Shape = {
  ...common,
  'table-uuid': z.string().min(1),
  'last-sequence-number': int64,
  schemas: z.array(icebergSchemaSchema).min(1),
  'current-schema-id': z.int().min(0),
  'partition-specs': z.array(partitionSpecSchema).min(1),
  'default-spec-id': z.int().min(0),
  'last-partition-id': z.int().min(0),
  snapshots: z.array(snapshotV2Schema).optional(),
  'sort-orders': z.array(sortOrderSchema).min(1),
  'default-sort-order-id': z.int().min(0),
};

export const tableMetadataV2Schema = z.looseObject({
  ...v2Shape,
  'format-version': z.literal(2),
});

export const tableMetadataV3Schema = z.looseObject({
  ...v2Shape,
  'format-version': z.literal(3),
  /** Row lineage: the first row id to assign to the next snapshot's new rows. */
  'next-row-id': int64,
  'encryption-keys': z.array(encryptedKeySchema).optional(),
});

export const tableMetadataSchema = z.discriminatedUnion('format-version', [
  tableMetadataV1Schema,
  tableMetadataV2Schema,
  tableMetadataV3Schema,
]);

export type TableMetadataV1 = z.output<typeof tableMetadataV1Schema>;
export type TableMetadataV2 = z.output<typeof tableMetadataV2Schema>;
export type TableMetadataV3 = z.output<typeof tableMetadataV3Schema>;
export type TableMetadata = z.output<typeof tableMetadataSchema>;

/** Validates already-decoded metadata (decode with `parseJsonExact`, never `JSON.parse`). */
export function validateTableMetadata(value: unknown): TableMetadata {
  return parseWith(tableMetadataSchema, value, 'table metadata');
}

/**
 * Parses the text of a `*.metadata.json`: 64-bit ids stay exact, errors name the field
 * (`snapshots[3].snapshot-id: …`). Throws `ValidationError`.
 */
export function parseTableMetadata(text: string): TableMetadata {
  return validateTableMetadata(decode(text, 'table metadata'));
}

export function decode(text: string, subject: string): unknown {
  try {
    return parseJsonExact(text);
  } catch (error) {
    throw new ValidationError(
      subject,
      [{ path: '', message: `not JSON: ${(error as Error).message}`, code: 'invalid_json' }],
      {
        cause: error,
      },
    );
  }
}
