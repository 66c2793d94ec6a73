import { z } from 'zod';
import { int64, stringMap } from '../primitives.ts';

export const blobMetadataSchema = z.looseObject({
  type: z.string().min(1),
  'snapshot-id': int64,
  'sequence-number': int64,
  fields: z.array(z.int()),
  properties: stringMap.optional(),
});

/** A puffin statistics file of a snapshot. */
export const statisticsFileSchema = z.looseObject({
  'snapshot-id': int64,
  'statistics-path': z.string().min(1),
  'file-size-in-bytes': z.int().min(0),
  'file-footer-size-in-bytes': z.int().min(0),
  'key-metadata': z.string().optional(),
  'blob-metadata': z.array(blobMetadataSchema),
});
export type IcebergStatisticsFile = z.output<typeof statisticsFileSchema>;

export const partitionStatisticsFileSchema = z.looseObject({
  'snapshot-id': int64,
  'statistics-path': z.string().min(1),
  'file-size-in-bytes': z.int().min(0),
});
export type IcebergPartitionStatisticsFile = z.output<typeof partitionStatisticsFileSchema>;

/** v3 table encryption keys (the key metadata is base64). */
export const encryptedKeySchema = z.looseObject({
  'key-id': z.string().min(1),
  'encrypted-key-metadata': z.string(),
  'encrypted-by-id': z.string().optional(),
  properties: stringMap.optional(),
});
export type IcebergEncryptedKey = z.output<typeof encryptedKeySchema>;
