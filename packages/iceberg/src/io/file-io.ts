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

/** `s3a://b/k` → `s3a`; a plain path has no scheme (null). */
export function schemeOf(location: string): string | null {
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(location);
  // `C:\…` style drive letters are not schemes; Iceberg never writes them anyway.
  return match === null || match[1]!.length === 1 ? null : match[1]!.toLowerCase();
}
