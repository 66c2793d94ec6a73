import type { TableId } from '@icepack/types';
import type { FileIO } from '../io/file-io.ts';
import { parseTableModel } from './to-table-model.ts';
import type { TableMetadataModel } from './table-model.ts';

/** A table as loaded from a catalog: its metadata, where it lives, and how to read its files. */
export interface LoadedTable {
  readonly id: TableId;
  readonly metadataLocation: string;
  readonly metadata: TableMetadataModel;
  /** Table config from the catalog (merged with catalog properties). */
  readonly config: Readonly<Record<string, string>>;
  readonly io: FileIO;
  /** The ETag the catalog sent, for `If-None-Match` on the next load. */
  readonly etag?: string;
}

/** Loads a table straight from a `*.metadata.json` (no catalog): tests, benchmarks, tools. */
export async function loadTableFromMetadataFile(
  id: TableId,
  metadataLocation: string,
  io: FileIO,
  signal?: AbortSignal,
): Promise<LoadedTable> {
  const bytes = await io.read(metadataLocation, signal);
  const metadata = parseTableModel(Buffer.from(bytes).toString('utf8'), metadataLocation);
  return { id, metadataLocation, metadata, config: {}, io };
}
