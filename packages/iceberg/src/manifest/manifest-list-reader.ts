import { IcebergError, IcebergErrorKind } from '../errors/iceberg-error.ts';
import { decodeBlock, readAvroContainer } from './avro-container.ts';
import type { ExactLong } from './exact-long.ts';
import { ManifestContent, type ManifestFile } from './manifest-file.ts';
import { compileProjection, type Projection } from './schema-projection.ts';

const PROJECTION: Projection = {
  fields: new Set([
    'manifest_path',
    'manifest_length',
    'partition_spec_id',
    'content',
    'sequence_number',
    'min_sequence_number',
    'added_snapshot_id',
    'added_files_count',
    'existing_files_count',
    'deleted_files_count',
    // v1 names of the same counts.
    'added_data_files_count',
    'existing_data_files_count',
    'deleted_data_files_count',
    'added_rows_count',
    'existing_rows_count',
    'deleted_rows_count',
  ]),
};

interface RawManifestFile {
  manifest_path: string;
  manifest_length: ExactLong;
  partition_spec_id: number;
  content?: number;
  sequence_number?: ExactLong;
  min_sequence_number?: ExactLong;
  added_snapshot_id: ExactLong | null;
  added_files_count?: number | null;
  existing_files_count?: number | null;
  deleted_files_count?: number | null;
  added_data_files_count?: number | null;
  existing_data_files_count?: number | null;
  deleted_data_files_count?: number | null;
  added_rows_count?: ExactLong | null;
  existing_rows_count?: ExactLong | null;
  deleted_rows_count?: ExactLong | null;
}

function count(value: ExactLong | null | undefined): number | null {
  return value === undefined || value === null ? null : Number(value);
}

/** Decodes a manifest list (v1/v2/v3) into its manifests. Errors name the file. */
export function decodeManifestList(
  bytes: Uint8Array,
  file: string,
  snapshotId?: string,
): ManifestFile[] {
  const container = readAvroContainer(bytes, file);
  const { reader, resolver } = compileProjection(
    container.schemaText,
    PROJECTION,
    'manifest-list',
    file,
  );
  const out: ManifestFile[] = [];
  for (const block of container.blocks) {
    decodeBlock<RawManifestFile>(block, reader, resolver, file, (raw) => {
      const content = raw.content ?? ManifestContent.data;
      if (content !== ManifestContent.data && content !== ManifestContent.deletes) {
        throw new IcebergError(
          IcebergErrorKind.corruptFile,
          `unknown manifest content ${content}`,
          { file },
        );
      }
      const addedSnapshotId = raw.added_snapshot_id ?? snapshotId;
      if (addedSnapshotId === undefined) {
        throw new IcebergError(IcebergErrorKind.corruptFile, 'manifest without added_snapshot_id', {
          file,
        });
      }
      out.push({
        path: raw.manifest_path,
        length: Number(raw.manifest_length),
        partitionSpecId: raw.partition_spec_id,
        content,
        sequenceNumber: String(raw.sequence_number ?? 0),
        minSequenceNumber: String(raw.min_sequence_number ?? 0),
        addedSnapshotId: String(addedSnapshotId),
        addedFilesCount: count(raw.added_files_count ?? raw.added_data_files_count),
        existingFilesCount: count(raw.existing_files_count ?? raw.existing_data_files_count),
        deletedFilesCount: count(raw.deleted_files_count ?? raw.deleted_data_files_count),
        addedRowsCount: count(raw.added_rows_count),
        existingRowsCount: count(raw.existing_rows_count),
        deletedRowsCount: count(raw.deleted_rows_count),
      });
    });
  }
  return out;
}
