import { IcebergError, IcebergErrorKind } from '../errors/iceberg-error.ts';
import { schemeOf, type FileIO } from './file-io.ts';
import { LocalFileIO } from './local-file-io.ts';
import { S3ClientPool, type RefreshS3Credentials } from './s3-client-pool.ts';
import type { S3FileIO } from './s3-file-io.ts';
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
  /**
   * Where S3 clients come from. Default: a pool of this FileIO's own, closed by `destroy()`;
   * a catalog passes its pool, shared by every table it loads (and closed by the catalog).
   */
  readonly s3Clients?: S3ClientPool;
  /** Fetches the vended credentials of a prefix again (the catalog's credentials endpoint). */
  readonly refreshCredentials?: (prefix: string) => ReturnType<RefreshS3Credentials>;
}

const S3_SCHEMES = new Set(['s3', 's3a', 's3n']);

/**
 * Routes each location to the FileIO of its scheme: `file:` and plain paths to the local
 * file system, `s3:`/`s3a:`/`s3n:` to S3 with the credentials for that location. Any other
 * scheme is an `unsupported` error that names it.
 */
export class TableFileIO implements FileIO {
  readonly #local = new LocalFileIO();
  readonly #s3: S3ClientPool;
  readonly #ownsPool: boolean;
  readonly #options: TableFileIOOptions;

  constructor(options: TableFileIOOptions = {}) {
    this.#options = options;
    this.#ownsPool = options.s3Clients === undefined;
    this.#s3 = options.s3Clients ?? new S3ClientPool();
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
    const refresh = this.#options.refreshCredentials;
    return this.#s3.client(
      { ...this.#options.properties, ...credential?.config },
      credential?.prefix ?? '',
      credential === undefined || refresh === undefined
        ? undefined
        : () => refresh(credential.prefix),
    );
  }

  /** Closes the S3 clients, unless they belong to a catalog's shared pool. */
  destroy(): void {
    if (this.#ownsPool) this.#s3.close();
  }
}
