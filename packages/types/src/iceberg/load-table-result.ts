import { z } from 'zod';
import { stringMap } from '../primitives.ts';
import { parseWith } from '../validation-error.ts';
import { decode, tableMetadataSchema } from './table-metadata.ts';

export const storageCredentialSchema = z.looseObject({
  /** The storage location prefix these credentials apply to; the longest match wins. */
  prefix: z.string(),
  config: stringMap,
});
export type IcebergStorageCredential = z.output<typeof storageCredentialSchema>;

/** The REST catalog's `LoadTableResult` (load table, create table, register table). */
export const loadTableResultSchema = z.looseObject({
  /** May be absent for a staged (not yet committed) table. */
  'metadata-location': z.string().min(1).optional(),
  metadata: tableMetadataSchema,
  config: stringMap.optional(),
  'storage-credentials': z.array(storageCredentialSchema).optional(),
});
export type LoadTableResult = z.output<typeof loadTableResultSchema>;

/** Parses a load-table response body; 64-bit ids stay exact. Throws `ValidationError`. */
export function parseLoadTableResult(text: string): LoadTableResult {
  return parseWith(loadTableResultSchema, decode(text, 'LoadTableResult'), 'LoadTableResult');
}
