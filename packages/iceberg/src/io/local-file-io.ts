import { open, readFile } from 'node:fs/promises';
import { IcebergError, IcebergErrorKind } from '../errors/iceberg-error.ts';
import type { FileIO } from './file-io.ts';

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
  async read(location: string, signal?: AbortSignal): Promise<Uint8Array> {
    try {
      return await readFile(localPath(location), signal === undefined ? {} : { signal });
    } catch (error) {
      throw fsError(error, location);
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
