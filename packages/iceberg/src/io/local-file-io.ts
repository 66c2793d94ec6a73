import { readFileSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { IcebergError, IcebergErrorKind } from '../errors/iceberg-error.ts';
import { fileTooLarge, MAX_FILE_READ_BYTES, type FileIO } from './file-io.ts';

/**
 * `file:///a`, `file:/a` (Hadoop's spelling) and plain paths. The path is taken as written,
 * not percent-decoded: Iceberg writes table names with spaces or `%` literally.
 */
export function localPath(location: string): string {
  if (!location.startsWith('file:')) return location;
  const rest = location.slice('file:'.length);
  if (rest.startsWith('//')) {
    const afterAuthority = rest.slice(2);
    // `file:///a` (empty authority) and `file://localhost/a`.
    const slash = afterAuthority.indexOf('/');
    return slash === -1 ? '/' : afterAuthority.slice(slash);
  }
  return rest;
}

export class LocalFileIO implements FileIO {
  /** Largest file `read` returns ({@link MAX_FILE_READ_BYTES}); a larger one is `corrupt-file`. */
  readonly #maxReadBytes: number;

  constructor(maxReadBytes = MAX_FILE_READ_BYTES) {
    this.#maxReadBytes = maxReadBytes;
  }

  /**
   * Read whole and synchronously: what is read here are metadata files (manifest lists,
   * manifests) of local catalogs, a few KiB to a few MiB from the page cache. The promise
   * API's open/fstat/read/close hops through the thread pool cost about six times the CPU
   * of the same read done in place (62 against 10 µs for a 4 KiB manifest, measured in
   * bench/results/scanner-first-sweep-cpu-2026-12-03.md), which the scanner's first sweep
   * of 10 000 tables pays 40 000 times; the event loop waits microseconds per file.
   */
  read(location: string, signal?: AbortSignal): Promise<Uint8Array> {
    if (signal?.aborted === true) {
      return Promise.reject(
        new IcebergError(IcebergErrorKind.io, 'read cancelled', {
          file: location,
          cause: signal.reason,
        }),
      );
    }
    try {
      const path = localPath(location);
      const stat = statSync(path);
      // A device or FIFO (`/dev/zero`) has no size and never ends: refused like a large file.
      const endless = !stat.isFile() && !stat.isDirectory();
      if (endless || stat.size > this.#maxReadBytes) {
        return Promise.reject(fileTooLarge(location, this.#maxReadBytes));
      }
      return Promise.resolve(readFileSync(path));
    } catch (error) {
      return Promise.reject(fsError(error, location));
    }
  }

  async readRange(location: string, offset: number, length: number): Promise<Uint8Array> {
    let handle;
    try {
      handle = await open(localPath(location), 'r');
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, offset);
      return buffer.subarray(0, bytesRead);
    } catch (error) {
      throw fsError(error, location);
    } finally {
      await handle?.close();
    }
  }
}

function fsError(error: unknown, file: string): IcebergError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    return new IcebergError(IcebergErrorKind.notFound, 'file not found', { file, cause: error });
  }
  if (code === 'EACCES' || code === 'EPERM') {
    return new IcebergError(IcebergErrorKind.forbidden, 'file not readable', {
      file,
      cause: error,
    });
  }
  return new IcebergError(IcebergErrorKind.io, `cannot read file: ${String(code ?? error)}`, {
    file,
    cause: error,
  });
}
