import { IcebergError, IcebergErrorKind } from '../errors/iceberg-error.ts';
import { schemeOf, type FileIO } from './file-io.ts';
import { LocalFileIO } from './local-file-io.ts';
import { S3FileIO, s3OptionsFromProperties } from './s3-file-io.ts';
import { credentialFor, type StorageCredential } from './storage-credentials.ts';

export interface TableFileIOOptions {
  /** Catalog and table config (`s3.endpoint`, `s3.access-key-id` …); later keys win. */
  readonly properties?: Readonly<Record<string, string>>;
  /** Vended credentials; the longest matching prefix applies to a location. */
  readonly storageCredentials?: readonly StorageCredential[];
  /**
   * Read `file:` and plain paths from this machine's file system. Only for catalogs configured
   * as local: a remote catalog must not make a service read its own files (issue 16).
   * Default true (the library's callers are tests and tools; the scanner sets it per catalog).
   */
  readonly localFiles?: boolean;
  /** The catalog's name, for the refusal's message. */
  readonly catalog?: string;
}

const S3_SCHEMES = new Set(['s3', 's3a', 's3n']);

/**
 * Routes each location to the FileIO of its scheme: `file:` and plain paths to the local
 * file system, `s3:`/`s3a:`/`s3n:` to S3 with the credentials for that location. Any other
 * scheme is an `unsupported` error that names it.
 */
export class TableFileIO implements FileIO {
  readonly #local = new LocalFileIO();
  readonly #s3 = new Map<string, S3FileIO>();
  readonly #options: TableFileIOOptions;

  constructor(options: TableFileIOOptions = {}) {
    this.#options = options;
  }

  async read(location: string, signal?: AbortSignal): Promise<Uint8Array> {
    return this.#for(location).read(location, signal);
  }

  async readRange(
    location: string,
    offset: number,
    length: number,
    signal?: AbortSignal,
  ): Promise<Uint8Array> {
    return this.#for(location).readRange(location, offset, length, signal);
  }

  #for(location: string): FileIO {
    const scheme = schemeOf(location);
    if (scheme === null || scheme === 'file') {
      if (this.#options.localFiles === false) {
        throw new IcebergError(
          IcebergErrorKind.unsupported,
          `refused to read a local file for catalog ${this.#options.catalog ?? '(unnamed)'}: it is not configured as local (file: locations are read only for local catalogs)`,
          { file: location },
        );
      }
      return this.#local;
    }
    if (S3_SCHEMES.has(scheme)) return this.#s3For(location);
    throw new IcebergError(IcebergErrorKind.unsupported, `unsupported file scheme "${scheme}"`, {
      file: location,
    });
  }

  #s3For(location: string): S3FileIO {
    const credential = credentialFor(this.#options.storageCredentials ?? [], location);
    const key = credential?.prefix ?? '';
    let io = this.#s3.get(key);
    if (io === undefined) {
      io = new S3FileIO(
        s3OptionsFromProperties({ ...this.#options.properties, ...credential?.config }),
      );
      this.#s3.set(key, io);
    }
    return io;
  }

  destroy(): void {
    for (const io of this.#s3.values()) io.destroy();
    this.#s3.clear();
  }
}
