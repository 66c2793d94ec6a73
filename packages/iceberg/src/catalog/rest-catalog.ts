import { setTimeout as delay } from 'node:timers/promises';
import {
  ValidationError,
  parseLoadTableResult,
  type LoadTableResult,
  type TableId,
} from '@icepack/types';
import { IcebergError, IcebergErrorKind } from '../errors/iceberg-error.ts';
import type { FileIO } from '../io/file-io.ts';
import { S3ClientPool } from '../io/s3-client-pool.ts';
import { credentialFor, type StorageCredential } from '../io/storage-credentials.ts';
import { TableFileIO } from '../io/table-file-io.ts';
import type { LoadedTable } from '../metadata/loaded-table.ts';
import { tableModelFromWire } from '../metadata/to-table-model.ts';
import { DEFAULT_OAUTH2_SCOPE } from './catalog-auth.ts';
import {
  encodeNamespace,
  namespaceParam,
  prefixPath,
  separatorFromConfig,
} from './namespace-path.ts';
import { OAuth2TokenSource } from './oauth2-token.ts';
import {
  resolveRestCatalogOptions,
  type ResolvedRestCatalogOptions,
  type RestCatalogOptions,
} from './rest-catalog-options.ts';
import { RestTransport, type RestRequest } from './rest-transport.ts';

/** The catalog's `GET /v1/config` merged with the client's properties. */
export interface CatalogConfig {
  /** defaults ← client properties ← overrides. */
  readonly properties: Readonly<Record<string, string>>;
  /** URL prefix (`/v1/{prefix}/…`); empty when the server sets none. */
  readonly prefix: string;
  /** Endpoints the server says it supports (`GET /v1/{prefix}/namespaces` …), when it says. */
  readonly endpoints: readonly string[] | undefined;
  /** Joins the parts of a nested namespace in paths and `parent` (`namespace-separator`). */
  readonly namespaceSeparator: string;
}

export type LoadTableOutcome =
  | { readonly status: 'loaded'; readonly table: LoadedTable; readonly result: LoadTableResult }
  | { readonly status: 'unchanged' };

export interface LoadTableOptions {
  /** The ETag of the last load: a 304 answer yields `{ status: 'unchanged' }`. */
  readonly etag?: string;
  /**
   * The metadata location of the caller's last load: an answer naming the same file is the
   * same metadata (metadata files are never rewritten), so it is neither parsed nor validated
   * and yields `{ status: 'unchanged' }`. Servers without ETags (Iceberg's own REST server)
   * would otherwise cost a full parse per unchanged re-scan, growing with every snapshot.
   */
  readonly knownMetadataLocation?: string;
  /** `all` (default on the server) or `refs`. */
  readonly snapshots?: 'all' | 'refs';
  readonly signal?: AbortSignal;
}

interface Page<T> {
  readonly items: T[];
  readonly next: string | undefined;
}

/**
 * The `metadata-location` of a load-table answer, read with the native JSON parser (a string
 * needs no exact integers); undefined when the body is not what it should be — the full parse
 * then reports why.
 */
function metadataLocationOf(text: string): string | undefined {
  try {
    const location = (JSON.parse(text) as { 'metadata-location'?: unknown } | null)?.[
      'metadata-location'
    ];
    return typeof location === 'string' ? location : undefined;
  } catch {
    return undefined;
  }
}

const sleepFor = (ms: number, signal?: AbortSignal): Promise<void> =>
  delay(ms, undefined, signal === undefined ? {} : { signal });

/**
 * An Iceberg REST catalog client (open-api/rest-catalog-open-api.yaml): config, nested
 * namespaces and tables with pagination, load table with ETag and vended credentials.
 * Errors are `IcebergError`s that name the call and the table.
 */
export class RestCatalog {
  readonly options: ResolvedRestCatalogOptions;
  readonly #transport: RestTransport;
  readonly #tokens: OAuth2TokenSource | undefined;
  readonly #fileIO: (
    properties: Readonly<Record<string, string>>,
    credentials: readonly StorageCredential[],
    id: TableId,
  ) => FileIO;
  readonly #s3: S3ClientPool;
  readonly #answerPropertyProblem: ((value: string) => string | undefined) | undefined;
  #config: Promise<CatalogConfig> | undefined;

  constructor(options: RestCatalogOptions) {
    this.options = resolveRestCatalogOptions(options);
    this.#answerPropertyProblem = options.answerPropertyProblem;
    const { auth, uri, timeoutMs, maxResponseBytes, properties } = this.options;
    if (auth.type === 'oauth2') {
      this.#tokens = new OAuth2TokenSource({
        serverUri: auth.serverUri ?? properties['oauth2-server-uri'] ?? `${uri}/v1/oauth/tokens`,
        credential: auth.credential,
        scope: auth.scope ?? properties.scope ?? DEFAULT_OAUTH2_SCOPE,
        timeoutMs,
        maxResponseBytes,
        ...(options.now === undefined ? {} : { now: options.now }),
      });
    }
    const tokens = this.#tokens;
    this.#transport = new RestTransport({
      uri,
      timeoutMs,
      maxResponseBytes,
      retry: this.options.retry,
      headers: this.options.compressedResponses ? {} : { 'accept-encoding': 'identity' },
      sleep: options.sleep ?? sleepFor,
      authorization: async (signal) => {
        if (auth.type === 'bearer') return `Bearer ${auth.token}`;
        if (tokens !== undefined) return `Bearer ${await tokens.token(signal)}`;
        return undefined;
      },
      onUnauthorized: () => {
        if (tokens === undefined) return false;
        tokens.invalidate();
        return true;
      },
    });
    this.#s3 = new S3ClientPool({
      ...options.s3,
      ...(options.now === undefined || options.s3?.now !== undefined ? {} : { now: options.now }),
    });
    this.#fileIO =
      options.fileIO ??
      ((props, credentials, id): FileIO =>
        new TableFileIO({
          properties: props,
          storageCredentials: credentials,
          localFiles: options.localFiles ?? true,
          catalog: options.name,
          s3Clients: this.#s3,
          refreshCredentials: async (prefix) => {
            const fresh = await this.loadCredentials(id);
            const match = fresh.find((c) => c.prefix === prefix) ?? credentialFor(fresh, prefix);
            return match === undefined ? undefined : { ...props, ...match.config };
          },
        }));
  }

  /** The S3 clients this catalog's tables share (sizes and counts, for tests and metrics). */
  get s3Clients(): S3ClientPool {
    return this.#s3;
  }

  /** Closes the S3 clients of every table this catalog loaded. */
  close(): void {
    this.#s3.close();
  }

  /**
   * `GET …/tables/{table}/credentials`: the table's vended storage credentials, fetched again
   * when the ones of its load are about to expire.
   */
  async loadCredentials(id: TableId, signal?: AbortSignal): Promise<StorageCredential[]> {
    const config = await this.config(signal);
    const base = await this.#base(signal);
    const body = await this.#json<{ 'storage-credentials'?: unknown }>({
      method: 'GET',
      path: `${base}/namespaces/${encodeNamespace(id.namespace, config.namespaceSeparator)}/tables/${encodeURIComponent(id.name)}/credentials`,
      call: 'loadCredentials',
      table: id,
      ...(signal === undefined ? {} : { signal }),
    });
    const list = body['storage-credentials'];
    if (!Array.isArray(list)) {
      throw badResponse('loadCredentials', 'storage-credentials is not a list');
    }
    return list.map((raw: unknown) => {
      const c = raw as { prefix?: unknown; config?: unknown };
      if (typeof c.prefix !== 'string') {
        throw badResponse('loadCredentials', 'a storage credential has no prefix');
      }
      const credential = {
        prefix: c.prefix,
        config: stringMap(c.config, 'config', 'loadCredentials'),
      };
      this.#checkAnswer(credential.config, `storage credential for ${credential.prefix}`, {
        call: 'loadCredentials',
        table: id,
      });
      return credential;
    });
  }

  /** OAuth2 tokens fetched so far (0 without OAuth2). */
  get tokensFetched(): number {
    return this.#tokens?.fetched ?? 0;
  }

  /** `GET /v1/config`, once; later calls reuse the answer. */
  config(signal?: AbortSignal): Promise<CatalogConfig> {
    this.#config ??= this.#loadConfig(signal).catch((error: unknown) => {
      this.#config = undefined; // a failed config call is tried again next time
      throw error;
    });
    return this.#config;
  }

  async #loadConfig(signal?: AbortSignal): Promise<CatalogConfig> {
    const body = await this.#json<{ defaults?: unknown; overrides?: unknown; endpoints?: unknown }>(
      {
        method: 'GET',
        path: '/v1/config',
        query: { warehouse: this.options.warehouse },
        call: 'getConfig',
        ...(signal === undefined ? {} : { signal }),
      },
    );
    const defaults = stringMap(body.defaults, 'defaults');
    const overrides = stringMap(body.overrides, 'overrides');
    this.#checkAnswer(defaults, 'config defaults', { call: 'getConfig' });
    this.#checkAnswer(overrides, 'config overrides', { call: 'getConfig' });
    const properties = { ...defaults, ...this.options.properties, ...overrides };
    const endpoints = Array.isArray(body.endpoints)
      ? body.endpoints.filter((e): e is string => typeof e === 'string')
      : undefined;
    return {
      properties,
      prefix: (properties.prefix ?? '').replace(/^\/+|\/+$/g, ''),
      endpoints,
      namespaceSeparator: separatorFromConfig(properties['namespace-separator']),
    };
  }

  async #base(signal?: AbortSignal): Promise<string> {
    const { prefix } = await this.config(signal);
    return prefix === '' ? '/v1' : `/v1/${prefixPath(prefix)}`;
  }

  /** Direct children of `parent` (top level when empty), every page walked. */
  async listNamespaces(parent: readonly string[] = [], signal?: AbortSignal): Promise<string[][]> {
    const base = await this.#base(signal);
    const { namespaceSeparator } = await this.config(signal);
    return this.#allPages(async (pageToken) => {
      const body = await this.#json<{ namespaces?: unknown; 'next-page-token'?: unknown }>({
        method: 'GET',
        path: `${base}/namespaces`,
        query: {
          ...(parent.length === 0 ? {} : { parent: namespaceParam(parent, namespaceSeparator) }),
          pageToken,
          pageSize: String(this.options.pageSize),
        },
        call: 'listNamespaces',
        ...(signal === undefined ? {} : { signal }),
      });
      if (!Array.isArray(body.namespaces) || !body.namespaces.every(isStringArray)) {
        throw badResponse('listNamespaces', 'namespaces is not a list of string lists');
      }
      return { items: body.namespaces, next: nextToken(body['next-page-token']) };
    });
  }

  /** Every namespace at every depth, walked level by level (parents before children). */
  async *walkNamespaces(signal?: AbortSignal): AsyncGenerator<string[]> {
    const queue: string[][] = [[]];
    const seen = new Set<string>();
    while (queue.length > 0) {
      const parent = queue.shift()!;
      for (const ns of await this.listNamespaces(parent, signal)) {
        const key = JSON.stringify(ns);
        // A server that ignores `parent` would list the same namespaces again: stop there.
        if (seen.has(key) || ns.length <= parent.length) continue;
        seen.add(key);
        yield ns;
        queue.push(ns);
      }
    }
  }

  /** Tables directly in `namespace`, every page walked. */
  async listTables(namespace: readonly string[], signal?: AbortSignal): Promise<TableId[]> {
    const base = await this.#base(signal);
    const { namespaceSeparator } = await this.config(signal);
    return this.#allPages(async (pageToken) => {
      const body = await this.#json<{ identifiers?: unknown; 'next-page-token'?: unknown }>({
        method: 'GET',
        path: `${base}/namespaces/${encodeNamespace(namespace, namespaceSeparator)}/tables`,
        query: { pageToken, pageSize: String(this.options.pageSize) },
        call: 'listTables',
        ...(signal === undefined ? {} : { signal }),
      });
      if (!Array.isArray(body.identifiers))
        throw badResponse('listTables', 'identifiers is not a list');
      const items = body.identifiers.map((raw: unknown) => {
        const id = raw as { namespace?: unknown; name?: unknown };
        if (!isStringArray(id.namespace) || typeof id.name !== 'string') {
          throw badResponse('listTables', 'an identifier lacks namespace or name');
        }
        return { catalog: this.options.name, namespace: id.namespace, name: id.name };
      });
      return { items, next: nextToken(body['next-page-token']) };
    });
  }

  /** Every table of every namespace. */
  async *walkTables(signal?: AbortSignal): AsyncGenerator<TableId> {
    for await (const ns of this.walkNamespaces(signal)) {
      for (const id of await this.listTables(ns, signal)) yield id;
    }
  }

  /**
   * Loads a table. With `etag`, a 304 from the catalog means the metadata is unchanged.
   * Vended storage credentials (longest prefix per location) go into the table's FileIO.
   */
  async loadTable(id: TableId, options: LoadTableOptions = {}): Promise<LoadTableOutcome> {
    const { signal } = options;
    const config = await this.config(signal);
    const base = await this.#base(signal);
    const response = await this.#transport.request({
      method: 'GET',
      path: `${base}/namespaces/${encodeNamespace(id.namespace, config.namespaceSeparator)}/tables/${encodeURIComponent(id.name)}`,
      query: { snapshots: options.snapshots },
      headers: {
        ...(this.options.vendedCredentials
          ? { 'X-Iceberg-Access-Delegation': 'vended-credentials' }
          : {}),
        ...(options.etag === undefined ? {} : { 'If-None-Match': options.etag }),
      },
      call: 'loadTable',
      table: id,
      accept: [304],
      ...(signal === undefined ? {} : { signal }),
    });
    if (response.status === 304) return { status: 'unchanged' };
    if (
      options.knownMetadataLocation !== undefined &&
      metadataLocationOf(response.text) === options.knownMetadataLocation
    ) {
      return { status: 'unchanged' };
    }
    let result: LoadTableResult;
    try {
      result = parseLoadTableResult(response.text);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      throw new IcebergError(IcebergErrorKind.badResponse, error.message, {
        call: 'loadTable',
        table: id,
        cause: error,
      });
    }
    const metadataLocation = result['metadata-location'];
    if (metadataLocation === undefined) {
      throw new IcebergError(IcebergErrorKind.badResponse, 'no metadata-location (staged table?)', {
        call: 'loadTable',
        table: id,
      });
    }
    // Before the table's FileIO exists: a refused endpoint is never called.
    this.#checkAnswer(result.config ?? {}, 'table config', { call: 'loadTable', table: id });
    const credentials = result['storage-credentials'] ?? [];
    for (const credential of credentials) {
      this.#checkAnswer(credential.config, `storage credential for ${credential.prefix}`, {
        call: 'loadTable',
        table: id,
      });
    }
    const tableConfig = { ...config.properties, ...result.config };
    const etag = response.headers.get('etag') ?? undefined;
    const table: LoadedTable = {
      id,
      metadataLocation,
      metadata: tableModelFromWire(result.metadata),
      config: tableConfig,
      io: this.#fileIO(tableConfig, credentials, id),
      ...(etag === undefined ? {} : { etag }),
    };
    return { status: 'loaded', table, result };
  }

  /**
   * Refuses an answer carrying a property value `answerPropertyProblem` refuses (an
   * `s3.endpoint` on a metadata address): a `bad-response` error naming the property and the
   * answer, never the value (a URL may hold credentials).
   */
  #checkAnswer(
    properties: Readonly<Record<string, string>>,
    answer: string,
    context: { readonly call: string; readonly table?: TableId },
  ): void {
    const check = this.#answerPropertyProblem;
    if (check === undefined) return;
    for (const [key, value] of Object.entries(properties)) {
      const problem = check(value);
      if (problem !== undefined) {
        throw new IcebergError(
          IcebergErrorKind.badResponse,
          `the catalog's ${answer} set ${key} to an address that may not be called: ${problem}`,
          context,
        );
      }
    }
  }

  async #allPages<T>(fetchPage: (pageToken: string) => Promise<Page<T>>): Promise<T[]> {
    const out: T[] = [];
    const seen = new Set<string>();
    // An empty token asks a paging server to start paging (spec); non-paging servers ignore it.
    let token = '';
    for (;;) {
      const page = await fetchPage(token);
      out.push(...page.items);
      if (page.next === undefined) return out;
      if (seen.has(page.next)) throw badResponse('list', `page token ${page.next} repeated`);
      seen.add(page.next);
      token = page.next;
    }
  }

  async #json<T>(request: RestRequest): Promise<T> {
    const response = await this.#transport.request(request);
    try {
      const body = JSON.parse(response.text) as unknown;
      if (typeof body !== 'object' || body === null) throw new Error('not a JSON object');
      return body as T;
    } catch (error) {
      throw new IcebergError(IcebergErrorKind.badResponse, `response is not a JSON object`, {
        call: request.call,
        ...(request.table === undefined ? {} : { table: request.table }),
        cause: error,
      });
    }
  }
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

function nextToken(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function stringMap(value: unknown, field: string, call = 'getConfig'): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw badResponse(call, `${field} is not an object`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v;
  return out;
}

function badResponse(call: string, message: string): IcebergError {
  return new IcebergError(IcebergErrorKind.badResponse, message, { call });
}
