import {
  GetObjectCommand,
  S3Client,
  S3ServiceException,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { IcebergError, IcebergErrorKind } from '../errors/iceberg-error.ts';
import { fileTooLarge, MAX_FILE_READ_BYTES, type FileIO } from './file-io.ts';

/** Iceberg's S3FileIO property keys (as vended by catalogs in `config`/`storage-credentials`). */
export const S3Properties = {
  endpoint: 's3.endpoint',
  region: 's3.region',
  clientRegion: 'client.region',
  pathStyleAccess: 's3.path-style-access',
  accessKeyId: 's3.access-key-id',
  secretAccessKey: 's3.secret-access-key',
  sessionToken: 's3.session-token',
  /** When vended credentials expire (epoch ms, Iceberg's `S3FileIOProperties`). */
  sessionTokenExpiresAtMs: 's3.session-token-expires-at-ms',
} as const;

/** Static credentials, or a provider the SDK calls (and memoizes until `expiration`). */
export type S3Credentials = NonNullable<S3ClientConfig['credentials']>;

export interface S3FileIOOptions {
  /** Default: `us-east-1` (any region works against a custom endpoint). */
  readonly region?: string;
  /** e.g. `http://127.0.0.1:9000` for MinIO or moto; default: AWS. */
  readonly endpoint?: string;
  /** Default: false (virtual-hosted style). */
  readonly pathStyle?: boolean;
  /** Default: the SDK's default credential chain. */
  readonly credentials?: S3Credentials;
  /** Largest object `read` returns ({@link MAX_FILE_READ_BYTES}); a larger one is `corrupt-file`. */
  readonly maxReadBytes?: number;
}

/** S3 options from Iceberg properties (`s3.endpoint`, `s3.access-key-id` …). */
export function s3OptionsFromProperties(props: Readonly<Record<string, string>>): S3FileIOOptions {
  const accessKeyId = props[S3Properties.accessKeyId];
  const secretAccessKey = props[S3Properties.secretAccessKey];
  const sessionToken = props[S3Properties.sessionToken];
  const region = props[S3Properties.region] ?? props[S3Properties.clientRegion];
  const endpoint = props[S3Properties.endpoint];
  return {
    ...(region === undefined ? {} : { region }),
    ...(endpoint === undefined ? {} : { endpoint }),
    pathStyle: props[S3Properties.pathStyleAccess] === 'true',
    ...(accessKeyId !== undefined && secretAccessKey !== undefined
      ? {
          credentials: {
            accessKeyId,
            secretAccessKey,
            ...(sessionToken === undefined ? {} : { sessionToken }),
          },
        }
      : {}),
  };
}

/** `s3://bucket/a/b` (also `s3a`, `s3n`) → bucket and key. */
export function parseS3Location(location: string): { bucket: string; key: string } {
  const match = /^s3[an]?:\/\/([^/]+)\/(.+)$/.exec(location);
  if (match === null) {
    throw new IcebergError(IcebergErrorKind.unsupported, 'not an s3 location', { file: location });
  }
  return { bucket: match[1]!, key: match[2]! };
}

export class S3FileIO implements FileIO {
  readonly #client: S3Client;
  /** Reads under way; a destroy waits for them (an evicted client may still be reading). */
  #inFlight = 0;
  #destroyed = false;
  readonly #maxReadBytes: number;

  constructor(options: S3FileIOOptions = {}) {
    this.#maxReadBytes = options.maxReadBytes ?? MAX_FILE_READ_BYTES;
    this.#client = new S3Client({
      region: options.region ?? 'us-east-1',
      forcePathStyle: options.pathStyle ?? false,
      ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
      ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    });
  }

  read(location: string, signal?: AbortSignal): Promise<Uint8Array> {
    return this.#get(location, undefined, signal);
  }

  readRange(
    location: string,
    offset: number,
    length: number,
    signal?: AbortSignal,
  ): Promise<Uint8Array> {
    if (length <= 0) return Promise.resolve(new Uint8Array(0));
    return this.#get(location, `bytes=${offset}-${offset + length - 1}`, signal);
  }

  async #get(
    location: string,
    range: string | undefined,
    signal?: AbortSignal,
  ): Promise<Uint8Array> {
    const { bucket, key } = parseS3Location(location);
    if (this.#destroyed) {
      throw new IcebergError(IcebergErrorKind.io, 's3 client closed', { file: location });
    }
    this.#inFlight++;
    try {
      const result = await this.#client.send(
        new GetObjectCommand({
          Bucket: bucket,
          Key: key,
          ...(range === undefined ? {} : { Range: range }),
        }),
        signal === undefined ? {} : { abortSignal: signal },
      );
      if (result.Body === undefined) return new Uint8Array(0);
      if (range !== undefined) return await result.Body.transformToByteArray();
      // Whole objects are read up to the limit: announced or found while reading.
      const body = result.Body as AsyncIterable<Uint8Array> & { destroy?: () => void };
      if ((result.ContentLength ?? 0) > this.#maxReadBytes) {
        body.destroy?.();
        throw fileTooLarge(location, this.#maxReadBytes);
      }
      const chunks: Uint8Array[] = [];
      let total = 0;
      for await (const chunk of body) {
        total += chunk.byteLength;
        if (total > this.#maxReadBytes) {
          body.destroy?.();
          throw fileTooLarge(location, this.#maxReadBytes);
        }
        chunks.push(chunk);
      }
      return Buffer.concat(chunks, total);
    } catch (error) {
      if (error instanceof IcebergError) throw error;
      throw s3Error(error, location);
    } finally {
      this.#inFlight--;
      if (this.#destroyed && this.#inFlight === 0) this.#client.destroy();
    }
  }

  /** Closes the client's connections, once the reads under way have ended. */
  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    if (this.#inFlight === 0) this.#client.destroy();
  }
}

function s3Error(error: unknown, file: string): IcebergError {
  if (error instanceof S3ServiceException) {
    const status = error.$metadata.httpStatusCode;
    const kind =
      error.name === 'NoSuchKey' ||
      error.name === 'NotFound' ||
      error.name === 'NoSuchBucket' ||
      status === 404
        ? IcebergErrorKind.notFound
        : status === 403
          ? IcebergErrorKind.forbidden
          : status === 401
            ? IcebergErrorKind.unauthorized
            : status !== undefined && status >= 500
              ? IcebergErrorKind.server
              : IcebergErrorKind.io;
    return new IcebergError(kind, `s3 ${error.name}`, {
      file,
      cause: error,
      ...(status === undefined ? {} : { status }),
    });
  }
  if ((error as Error).name === 'CredentialsProviderError') {
    return new IcebergError(
      IcebergErrorKind.unauthorized,
      `no S3 credentials: ${(error as Error).message}`,
      {
        file,
        cause: error,
      },
    );
  }
  if ((error as Error).name === 'AbortError') {
    return new IcebergError(IcebergErrorKind.timeout, 's3 read aborted', { file, cause: error });
  }
  return new IcebergError(
    IcebergErrorKind.connection,
    `s3 read failed: ${(error as Error).message}`,
    {
      file,
      cause: error,
    },
  );
}
