/** What one scan request came to; the metric a scan counts in. */
export const ScanOutcome = {
  /** Metadata changed (or first seen): TableState computed and published. */
  scanned: 'scanned',
  /** Metadata location (or ETag) unchanged since the last published state: nothing read. */
  unchanged: 'unchanged',
  /** The catalog is not bound (or not defined): not this scanner's business. */
  unbound: 'unbound',
  /** The catalog says the table does not exist: tombstone published. */
  gone: 'gone',
} as const;
export type ScanOutcome = (typeof ScanOutcome)[keyof typeof ScanOutcome];

/** True when the loaded metadata is the one the last published state was computed from. */
export function isUnchanged(
  previousMetadataLocation: string | undefined,
  loadedMetadataLocation: string,
): boolean {
  return previousMetadataLocation === loadedMetadataLocation;
}
