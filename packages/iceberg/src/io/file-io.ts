import { IcebergError, IcebergErrorKind } from '../errors/iceberg-error.ts';

/** Reads files of a table (metadata JSON, manifest lists, manifests) by their location. */
export interface FileIO {
  /** The whole file. */
  read(location: string, signal?: AbortSignal): Promise<Uint8Array>;
  /** `length` bytes from `offset` (fewer when the file ends first). */
  readRange(
    location: string,
    offset: number,
    length: number,
    signal?: AbortSignal,
  ): Promise<Uint8Array>;
}

/**
 * Most bytes a whole-file read (metadata JSON, manifest list, manifest) returns: 256 MiB, the
 * Avro decompression cap. A location is the catalog's word: a snapshot's manifest list may name
 * any object (a data file, an endless stream), which would otherwise be buffered whole before
 * any bound applies.
 */
export const MAX_FILE_READ_BYTES = 256 * 2 ** 20;

/** The `corrupt-file` error of a file larger than `maxBytes`, naming it and the limit. */
export function fileTooLarge(file: string, maxBytes: number): IcebergError {
  return new IcebergError(
    IcebergErrorKind.corruptFile,
    `file larger than the limit of ${String(maxBytes)} bytes for a metadata file or manifest (a damaged or hostile location)`,
    { file, retryable: false },
  );
}

/** `s3a://b/k` → `s3a`; a plain path has no scheme (null). */
export function schemeOf(location: string): string | null {
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(location);
  // `C:\…` style drive letters are not schemes; Iceberg never writes them anyway.
  return match === null || match[1]!.length === 1 ? null : match[1]!.toLowerCase();
}
