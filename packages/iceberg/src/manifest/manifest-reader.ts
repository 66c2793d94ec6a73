import { IcebergError, IcebergErrorKind } from '../errors/iceberg-error.ts';
import { decodeBlock, readAvroContainer } from './avro-container.ts';
import type { ExactLong } from './exact-long.ts';
import {
  EntryStatus,
  FileContent,
  ManifestContent,
  type ManifestEntry,
  type ManifestFile,
} from './manifest-file.ts';
import { compileProjection, type Projection } from './schema-projection.ts';

// Only what health needs; the column statistics maps (column_sizes, value_counts,
// null_value_counts, nan_value_counts, lower_bounds, upper_bounds), split offsets and key
// metadata are skipped by schema resolution, never materialised.
const DATA_FILE_FIELDS = [
  'content',
  'file_path',
  'file_format',
  'partition',
  'record_count',
  'file_size_in_bytes',
  'referenced_data_file',
  'content_offset',
  'content_size_in_bytes',
];
const ENTRY_FIELDS = new Set([
  'status',
  'snapshot_id',
  'sequence_number',
  'file_sequence_number',
  'data_file',
]);
const PROJECTION: Projection = {
  fields: ENTRY_FIELDS,
  nested: { data_file: { fields: new Set(DATA_FILE_FIELDS) } },
};
// Delete manifests also keep the bounds: a position-delete file whose `file_path` column has
// equal lower and upper bounds deletes rows of that one data file (Iceberg's
// ContentFileUtil.referencedDataFile), which v2 writers do not record in referenced_data_file.
const DELETE_PROJECTION: Projection = {
  fields: ENTRY_FIELDS,
  nested: {
    data_file: { fields: new Set([...DATA_FILE_FIELDS, 'lower_bounds', 'upper_bounds']) },
  },
};

/** Field id of the `file_path` column of position-delete files (spec, reserved ids). */
const DELETE_FILE_PATH_FIELD_ID = 2147483546;

interface RawBound {
  key: number;
  value: Uint8Array;
}

interface RawDataFile {
  content?: number;
  file_path: string;
  file_format: string;
  partition: Record<string, unknown>;
  record_count: ExactLong;
  file_size_in_bytes: ExactLong;
  referenced_data_file?: string | null;
  content_offset?: ExactLong | null;
  content_size_in_bytes?: ExactLong | null;
  lower_bounds?: readonly RawBound[] | null;
  upper_bounds?: readonly RawBound[] | null;
}

interface RawEntry {
  status: number;
  snapshot_id: ExactLong | null;
  sequence_number?: ExactLong | null;
  file_sequence_number?: ExactLong | null;
  data_file: RawDataFile;
}

export interface DecodeManifestResult {
  /** Entries decoded (live and deleted). */
  readonly entries: number;
}

/**
 * Decodes a manifest (v1/v2/v3) and calls `onEntry` for every entry, live or deleted, with
 * snapshot id and sequence numbers inherited from `manifest` (its manifest-list entry) as
 * the spec says: null values are inherited for ADDED entries. Errors name the file.
 */
export function decodeManifest(
  bytes: Uint8Array,
  manifest: ManifestFile,
  onEntry: (entry: ManifestEntry) => void,
): DecodeManifestResult {
  const file = manifest.path;
  const container = readAvroContainer(bytes, file);
  const deletes = manifest.content === ManifestContent.deletes;
  const { reader, resolver } = compileProjection(
    container.schemaText,
    deletes ? DELETE_PROJECTION : PROJECTION,
    deletes ? 'delete-manifest' : 'manifest',
    file,
  );
  const inheritedSnapshot = manifest.addedSnapshotId;
  const inheritedSequence = manifest.sequenceNumber;
  let entries = 0;
  for (const block of container.blocks) {
    decodeBlock<RawEntry>(block, reader, resolver, file, (raw) => {
      const status = raw.status;
      if (
        status !== EntryStatus.existing &&
        status !== EntryStatus.added &&
        status !== EntryStatus.deleted
      ) {
        throw new IcebergError(IcebergErrorKind.corruptFile, `unknown entry status ${status}`, {
          file,
        });
      }
      const df = raw.data_file;
      const content = df.content ?? FileContent.data;
      if (
        content !== FileContent.data &&
        content !== FileContent.positionDeletes &&
        content !== FileContent.equalityDeletes
      ) {
        throw new IcebergError(IcebergErrorKind.corruptFile, `unknown file content ${content}`, {
          file,
        });
      }
      const added = status === EntryStatus.added;
      const sequenceNumber = inherit(
        raw.sequence_number,
        added,
        inheritedSequence,
        'sequence_number',
        file,
      );
      entries++;
      onEntry({
        status,
        snapshotId: raw.snapshot_id === null ? inheritedSnapshot : String(raw.snapshot_id),
        sequenceNumber,
        fileSequenceNumber: inherit(
          raw.file_sequence_number,
          added,
          inheritedSequence,
          'file_sequence_number',
          file,
        ),
        content,
        filePath: df.file_path,
        fileFormat: df.file_format,
        partition: df.partition,
        recordCount: Number(df.record_count),
        fileSizeInBytes: Number(df.file_size_in_bytes),
        referencedDataFile:
          df.referenced_data_file ??
          (content === FileContent.positionDeletes ? pathFromBounds(df) : null),
        contentOffset:
          df.content_offset === undefined || df.content_offset === null
            ? null
            : Number(df.content_offset),
        contentSizeInBytes:
          df.content_size_in_bytes === undefined || df.content_size_in_bytes === null
            ? null
            : Number(df.content_size_in_bytes),
      });
    });
  }
  return { entries };
}

/** The one data file a position-delete file's `file_path` bounds name, if they are equal. */
function pathFromBounds(df: RawDataFile): string | null {
  const lower = df.lower_bounds?.find((b) => b.key === DELETE_FILE_PATH_FIELD_ID)?.value;
  const upper = df.upper_bounds?.find((b) => b.key === DELETE_FILE_PATH_FIELD_ID)?.value;
  if (lower === undefined || upper === undefined) return null;
  if (Buffer.compare(Buffer.from(lower), Buffer.from(upper)) !== 0) return null;
  return Buffer.from(lower).toString('utf8');
}

function inherit(
  value: ExactLong | null | undefined,
  added: boolean,
  inherited: string,
  field: string,
  file: string,
): string {
  // v1 manifests have no sequence numbers at all: everything is sequence number 0.
  if (value === undefined) return inherited;
  if (value !== null) return String(value);
  if (added) return inherited;
  throw new IcebergError(
    IcebergErrorKind.corruptFile,
    `${field} is null for an entry that is not ADDED`,
    { file },
  );
}
