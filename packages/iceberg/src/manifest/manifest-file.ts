/** Spec codes: a manifest holds data files (0) or delete files (1). */
export const ManifestContent = { data: 0, deletes: 1 } as const;
export type ManifestContent = (typeof ManifestContent)[keyof typeof ManifestContent];

/** One entry of a manifest list. Ids and sequence numbers are exact decimal strings. */
export interface ManifestFile {
  readonly path: string;
  readonly length: number;
  readonly partitionSpecId: number;
  readonly content: ManifestContent;
  /** "0" for v1. */
  readonly sequenceNumber: string;
  readonly minSequenceNumber: string;
  readonly addedSnapshotId: string;
  readonly addedFilesCount: number | null;
  readonly existingFilesCount: number | null;
  readonly deletedFilesCount: number | null;
  readonly addedRowsCount: number | null;
  readonly existingRowsCount: number | null;
  readonly deletedRowsCount: number | null;
}

/** Spec codes of a manifest entry's status; live files are existing or added. */
export const EntryStatus = { existing: 0, added: 1, deleted: 2 } as const;
export type EntryStatus = (typeof EntryStatus)[keyof typeof EntryStatus];

/** Spec codes of a content file. */
export const FileContent = { data: 0, positionDeletes: 1, equalityDeletes: 2 } as const;
export type FileContent = (typeof FileContent)[keyof typeof FileContent];

/**
 * One manifest entry with the fields health needs (column statistics are not decoded).
 * Snapshot id and sequence numbers are already inherited from the manifest list entry.
 */
export interface ManifestEntry {
  readonly status: EntryStatus;
  readonly snapshotId: string;
  /** Data sequence number; null only for v1 ("0" semantics). */
  readonly sequenceNumber: string;
  readonly fileSequenceNumber: string;
  readonly content: FileContent;
  readonly filePath: string;
  /** `PARQUET`, `AVRO`, `ORC`, `PUFFIN` (upper case as written). */
  readonly fileFormat: string;
  /** Partition field name → value as decoded (number, exact-long string, Buffer, null …). */
  readonly partition: Readonly<Record<string, unknown>>;
  readonly recordCount: number;
  readonly fileSizeInBytes: number;
  /** Position deletes and DVs: the data file they apply to, when known. */
  readonly referencedDataFile: string | null;
  /** Deletion vectors: the blob's place in the puffin file. */
  readonly contentOffset: number | null;
  readonly contentSizeInBytes: number | null;
}

export function isLive(entry: { readonly status: number }): boolean {
  return entry.status !== EntryStatus.deleted;
}

export function isDeletionVector(entry: ManifestEntry): boolean {
  return (
    entry.content === FileContent.positionDeletes && entry.fileFormat.toUpperCase() === 'PUFFIN'
  );
}
