import { scanManifest, type EntryView } from './entry-scanner.ts';
import type { ManifestEntry, ManifestFile } from './manifest-file.ts';

export interface DecodeManifestResult {
  /** Entries decoded (live and deleted). */
  readonly entries: number;
}

/**
 * Decodes a manifest (v1/v2/v3) and calls `onEntry` for every entry, live or deleted, as a
 * `ManifestEntry` of its own, with snapshot id and sequence numbers inherited from
 * `manifest` (its manifest-list entry) as the spec says. Errors name the file. Callers that
 * only aggregate use `scanManifest` (no object per entry).
 */
export function decodeManifest(
  bytes: Uint8Array,
  manifest: ManifestFile,
  onEntry: (entry: ManifestEntry) => void,
): DecodeManifestResult {
  return scanManifest(bytes, manifest, (view) => onEntry(toManifestEntry(view)));
}

/** A `ManifestEntry` of its own from the scanner's reused view. */
export function toManifestEntry(view: EntryView): ManifestEntry {
  return {
    status: view.status,
    snapshotId: view.snapshotId,
    sequenceNumber: String(view.sequenceNumber),
    fileSequenceNumber: String(view.fileSequenceNumber),
    content: view.content,
    filePath: view.filePath(),
    fileFormat: view.fileFormat(),
    partition: view.partition(),
    recordCount: view.recordCount,
    fileSizeInBytes: view.fileSizeInBytes,
    referencedDataFile: view.referencedDataFile(),
    contentOffset: view.contentOffset,
    contentSizeInBytes: view.contentSizeInBytes,
  };
}
