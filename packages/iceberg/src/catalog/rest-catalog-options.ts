import type { RestCatalogAuth } from './catalog-auth.ts';
import { DEFAULT_MAX_RESPONSE_BYTES } from './bounded-body.ts';
import { resolveRetry, type ResolvedRetry, type RetryOptions } from './retry-policy.ts';
import type { FileIO } from '../io/file-io.ts';
import type { S3ClientPoolOptions } from '../io/s3-client-pool.ts';
import type { StorageCredential } from '../io/storage-credentials.ts';

export interface RestCatalogOptions {
  /** The catalog's name in Icepack: the `catalog` of every TableId it returns. */
  readonly name: string;
  /** Base URI, e.g. `http://127.0.0.1:18181` (the `/v1/...` paths go below it). */
  readonly uri: string;
  /** Sent as `?warehouse=` to `GET /v1/config`. Default: none. */
  readonly warehouse?: string;
  /** Client properties: merged as server defaults ← these ← server overrides. Default: {}. */
  readonly properties?: Readonly<Record<string, string>>;
  /** Default: `{ type: 'none' }`. */
  readonly auth?: RestCatalogAuth;
  /** Per attempt. Default: 30 s. */
  readonly timeoutMs?: number;
  /** Largest catalog response body read (else a `bad-response` error). Default: 64 MiB. */
  readonly maxResponseBytes?: number;
  /**
   * Accept gzip-compressed answers. Default true. False asks for `Accept-Encoding: identity`:
   * for a catalog next to its reader, gzip costs more CPU on both ends (the catalog's deflate,
   * a zlib stream per answer here) than the bytes it saves; see ADR 0038.
   */
  readonly compressedResponses?: boolean;
  readonly retry?: RetryOptions;
  /** Ask for vended storage credentials on load table. Default: true. */
  readonly vendedCredentials?: boolean;
  /** `pageSize` sent with list calls; servers that do not page ignore it. Default: 100. */
  readonly pageSize?: number;
  /**
   * Read `file:` locations the catalog returns from this machine (`TableFileIO.localFiles`).
   * Default true; the scanner passes false for catalogs not configured as local.
   */
  readonly localFiles?: boolean;
  /**
   * The catalog's S3 clients, shared by every table it loads: bounds, credential refresh
   * margin, default credentials (ADR 0019). Closed by `close()`.
   */
  readonly s3?: S3ClientPoolOptions;
  /**
   * Why a property value the catalog answers with may not be used (an `s3.endpoint` on a cloud
   * metadata address, …); undefined when it may. Applied to every value of `GET /v1/config`'s
   * `defaults` and `overrides`, of a loaded table's `config` and of its vended credentials'
   * `config` as each answer arrives, so no storage client is built from a refused one: the
   * call fails `bad-response`, naming the property and the answer. Default: none (every value
   * is used); the services pass the catalog access policy's `propertyValueProblem`.
   */
  readonly answerPropertyProblem?: (value: string) => string | undefined;
  /** Builds the FileIO of a loaded table. Default: `TableFileIO` (file: and s3:). */
  readonly fileIO?: (
    properties: Readonly<Record<string, string>>,
    credentials: readonly StorageCredential[],
  ) => FileIO;
  /** For tests: how to wait between retries. Default: a timer. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly now?: () => number;
}

export interface ResolvedRestCatalogOptions {
  readonly name: string;
  readonly uri: string;
  readonly warehouse: string | undefined;
  readonly properties: Readonly<Record<string, string>>;
  readonly auth: RestCatalogAuth;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  readonly compressedResponses: boolean;
  readonly retry: ResolvedRetry;
  readonly vendedCredentials: boolean;
  readonly pageSize: number;
}

export function resolveRestCatalogOptions(options: RestCatalogOptions): ResolvedRestCatalogOptions {
  if (!/^https?:\/\//.test(options.uri))
    throw new TypeError(`catalog uri must be http(s), got ${options.uri}`);
  return {
    name: options.name,
    uri: options.uri.replace(/\/+$/, ''),
    warehouse: options.warehouse,
    properties: options.properties ?? {},
    auth: options.auth ?? { type: 'none' },
    timeoutMs: options.timeoutMs ?? 30_000,
    maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    compressedResponses: options.compressedResponses ?? true,
    retry: resolveRetry(options.retry),
    vendedCredentials: options.vendedCredentials ?? true,
    pageSize: options.pageSize ?? 100,
  };
}
