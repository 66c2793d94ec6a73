import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RestCatalog } from './rest-catalog.ts';
import type { RestCatalogOptions } from './rest-catalog-options.ts';
import { rejectedIcebergError as rejection } from '../testing/iceberg-error-of.ts';

const METADATA = readFileSync(
  fileURLToPath(
    new URL('../../../types/test-data/metadata/v2-partitioned.metadata.json', import.meta.url),
  ),
  'utf8',
);
const NAMESPACES = [['a'], ['b'], ['a', 'x'], ['a', 'y'], ['a', 'x', 'deep']];
const TABLES: Record<string, string[]> = { 'a/x/deep': ['t1', 't2', 't3'], a: ['top'] };

interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
}

type AnswerPart = 'defaults' | 'overrides' | 'table' | 'credential' | 'refreshed';

/** A catalog that pages everything (one namespace, two tables per page) and misbehaves on demand. */
class FakeCatalog {
  server!: Server;
  uri = '';
  requests: Recorded[] = [];
  /** Statuses to answer the next matching requests with, before behaving. */
  failures: { path: RegExp; status: number; headers?: Record<string, string> }[] = [];
  bearer: string | undefined;
  /** The multipart namespace separator; a non-default one is announced in the config. */
  separator = '\u001f';
  tokens = 0;
  revoked = new Set<string>();
  /** Properties added to an answer: the config's, the table's, a vended credential's. */
  extra: Partial<Record<AnswerPart, Record<string, string>>> = {};

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      this.handle(req, res);
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.uri = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  reset(): void {
    this.requests = [];
    this.failures = [];
    this.bearer = undefined;
    this.separator = '\u001f';
    this.tokens = 0;
    this.revoked.clear();
    this.extra = {};
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', this.uri);
    this.requests.push({
      method: req.method ?? '',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
    });
    const json = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    if (url.pathname === '/oauth/token') {
      let form = '';
      req.on('data', (chunk: Buffer) => (form += chunk.toString()));
      req.on('end', () => {
        const params = new URLSearchParams(form);
        if (params.get('client_secret') !== 's3cret') return json(401, { error: 'invalid_client' });
        this.tokens++;
        json(200, {
          access_token: `tok-${this.tokens}`,
          token_type: 'bearer',
          expires_in: 3600,
          scope: params.get('scope'),
        });
      });
      return;
    }
    const failure = this.failures.findIndex((f) => f.path.test(url.pathname));
    if (failure !== -1) {
      const [f] = this.failures.splice(failure, 1);
      return json(
        f!.status,
        { error: { message: 'try later', type: 'Busy', code: f!.status } },
        f!.headers,
      );
    }
    const auth = req.headers.authorization;
    const expected = this.bearer ?? (this.tokens > 0 ? `Bearer tok-${this.tokens}` : undefined);
    if (expected !== undefined && (auth !== expected || this.revoked.has(auth))) {
      return json(401, {
        error: { message: 'Not authorized', type: 'NotAuthorizedException', code: 401 },
      });
    }
    const page = <T>(items: T[], size: number): { items: T[]; next: string | null } => {
      const start = Number(url.searchParams.get('pageToken') || '0');
      const next = start + size < items.length ? String(start + size) : null;
      return { items: items.slice(start, start + size), next };
    };
    if (url.pathname === '/v1/config') {
      const separator =
        this.separator === '\u001f'
          ? {}
          : { 'namespace-separator': encodeURIComponent(this.separator) };
      return json(200, {
        defaults: { a: 'd', b: 'd', ...this.extra.defaults },
        overrides: { c: 'o', prefix: 'wh1', ...separator, ...this.extra.overrides },
      });
    }
    let m = /^\/v1\/wh1\/namespaces$/.exec(url.pathname);
    if (m !== null) {
      const parent = url.searchParams.get('parent')?.split(this.separator) ?? [];
      const children = NAMESPACES.filter(
        (ns) => ns.length === parent.length + 1 && parent.every((p, i) => ns[i] === p),
      );
      const { items, next } = page(children, 1);
      return json(200, { namespaces: items, 'next-page-token': next });
    }
    m = /^\/v1\/wh1\/namespaces\/([^/]+)\/tables$/.exec(url.pathname);
    if (m !== null) {
      const ns = this.namespaceKey(m[1]!);
      const { items, next } = page(TABLES[ns] ?? [], 2);
      return json(200, {
        identifiers: items.map((name) => ({ namespace: ns.split('/'), name })),
        'next-page-token': next,
      });
    }
    m = /^\/v1\/wh1\/namespaces\/([^/]+)\/tables\/([^/]+)\/credentials$/.exec(url.pathname);
    if (m !== null) {
      return json(200, {
        'storage-credentials': [
          {
            prefix: `s3://bucket/wh/${decodeURIComponent(m[2]!)}/`,
            config: {
              's3.access-key-id': 'fresh',
              's3.session-token-expires-at-ms': '99',
              ...this.extra.refreshed,
            },
          },
        ],
      });
    }
    m = /^\/v1\/wh1\/namespaces\/([^/]+)\/tables\/([^/]+)$/.exec(url.pathname);
    if (m !== null) {
      const ns = this.namespaceKey(m[1]!);
      const name = decodeURIComponent(m[2]!);
      if (!(TABLES[ns] ?? []).includes(name)) {
        return json(404, {
          error: {
            message: `Table does not exist: ${name}`,
            type: 'NoSuchTableException',
            code: 404,
          },
        });
      }
      if (req.headers['if-none-match'] === '"v7"') return json(304, undefined);
      res.writeHead(200, { 'content-type': 'application/json', etag: '"v7"' });
      res.end(
        `{"metadata-location":"s3://bucket/wh/${name}/metadata/v7.metadata.json","metadata":${METADATA},` +
          `"config":${JSON.stringify({ 's3.endpoint': 'http://127.0.0.1:1', ...this.extra.table })},` +
          `"storage-credentials":[{"prefix":"s3://bucket/","config":{"s3.access-key-id":"wide"}},` +
          `{"prefix":"s3://bucket/wh/","config":${JSON.stringify({ 's3.access-key-id': 'narrow', ...this.extra.credential })}}]}`,
      );
      return;
    }
    json(404, { error: { message: 'no route', type: 'NotFound', code: 404 } });
  }

  /** A namespace path segment (`a%1Fx`) → the TABLES key (`a/x`), as a server splits it. */
  namespaceKey(segment: string): string {
    return decodeURIComponent(segment).split(this.separator).join('/');
  }
}

const fake = new FakeCatalog();
const delays: number[] = [];

function catalog(overrides: Partial<RestCatalogOptions> = {}): RestCatalog {
  return new RestCatalog({
    name: 'lake',
    uri: fake.uri,
    properties: { b: 'c', c: 'c' },
    retry: { maxAttempts: 4, baseDelayMs: 1 },
    sleep: (ms) => {
      delays.push(ms);
      return Promise.resolve();
    },
    ...overrides,
  });
}

beforeAll(() => fake.start());
afterAll(() => new Promise<void>((resolve) => fake.server.close(() => resolve())));
beforeEach(() => {
  fake.reset();
  delays.length = 0;
});

describe('RestCatalog', () => {
  it('merges config as defaults ← client ← overrides and uses the prefix', async () => {
    const config = await catalog().config();
    expect(config.properties).toEqual({ a: 'd', b: 'c', c: 'o', prefix: 'wh1' });
    expect(config.prefix).toBe('wh1');
  });

  it('walks nested namespaces level by level through every page', async () => {
    const seen: string[][] = [];
    for await (const ns of catalog().walkNamespaces()) seen.push(ns);
    expect(seen).toEqual([['a'], ['b'], ['a', 'x'], ['a', 'y'], ['a', 'x', 'deep']]);
    const parents = fake.requests
      .filter((r) => r.path.endsWith('/namespaces'))
      .map((r) => r.query.get('parent'));
    expect(parents).toContain('a\u001fx');
    // The first request of each listing starts paging with an empty token.
    expect(fake.requests.find((r) => r.path.endsWith('/namespaces'))!.query.get('pageToken')).toBe(
      '',
    );
  });

  it('joins nested namespaces with the separator the catalog announces', async () => {
    fake.separator = '.';
    const c = catalog();
    expect((await c.config()).namespaceSeparator).toBe('.');
    const seen: string[][] = [];
    for await (const ns of c.walkNamespaces()) seen.push(ns);
    expect(seen).toEqual([['a'], ['b'], ['a', 'x'], ['a', 'y'], ['a', 'x', 'deep']]);
    expect(fake.requests.map((r) => r.query.get('parent'))).toContain('a.x');
    expect((await c.listTables(['a', 'x', 'deep'])).map((t) => t.name)).toEqual(['t1', 't2', 't3']);
    expect(fake.requests.at(-1)?.path).toBe('/v1/wh1/namespaces/a.x.deep/tables');
    const loaded = await c.loadTable({
      catalog: 'lake',
      namespace: ['a', 'x', 'deep'],
      name: 't1',
    });
    expect(loaded.status).toBe('loaded');
  });

  it('lists tables across pages and walks every table of the catalog', async () => {
    const c = catalog();
    expect((await c.listTables(['a', 'x', 'deep'])).map((t) => t.name)).toEqual(['t1', 't2', 't3']);
    const all = [];
    for await (const id of c.walkTables()) all.push(id);
    expect(all).toEqual([
      { catalog: 'lake', namespace: ['a'], name: 'top' },
      { catalog: 'lake', namespace: ['a', 'x', 'deep'], name: 't1' },
      { catalog: 'lake', namespace: ['a', 'x', 'deep'], name: 't2' },
      { catalog: 'lake', namespace: ['a', 'x', 'deep'], name: 't3' },
    ]);
  });

  it('loads a table with vended credentials and answers "unchanged" on 304', async () => {
    const c = catalog();
    const id = { catalog: 'lake', namespace: ['a', 'x', 'deep'], name: 't2' };
    const outcome = await c.loadTable(id);
    expect(outcome.status).toBe('loaded');
    if (outcome.status !== 'loaded') return;
    expect(outcome.table.metadataLocation).toBe('s3://bucket/wh/t2/metadata/v7.metadata.json');
    expect(outcome.table.etag).toBe('"v7"');
    expect(outcome.table.config['s3.endpoint']).toBe('http://127.0.0.1:1');
    expect(outcome.table.metadata.currentSnapshotId).toMatch(/^\d+$/);
    const request = fake.requests.at(-1)!;
    expect(request.headers['x-iceberg-access-delegation']).toBe('vended-credentials');
    expect(request.path).toBe('/v1/wh1/namespaces/a%1Fx%1Fdeep/tables/t2');

    expect(await c.loadTable(id, { etag: outcome.table.etag! })).toEqual({ status: 'unchanged' });
    expect(fake.requests.at(-1)!.headers['if-none-match']).toBe('"v7"');
  });

  it('answers "unchanged" without an ETag when the metadata location is the one already known', async () => {
    const c = catalog();
    const id = { catalog: 'lake', namespace: ['a', 'x', 'deep'], name: 't2' };
    const known = 's3://bucket/wh/t2/metadata/v7.metadata.json';
    expect(await c.loadTable(id, { knownMetadataLocation: known })).toEqual({
      status: 'unchanged',
    });
    const moved = await c.loadTable(id, {
      knownMetadataLocation: 's3://bucket/wh/t2/metadata/v6.metadata.json',
    });
    expect(moved.status === 'loaded' && moved.table.metadataLocation).toBe(known);
  });

  it('asks for plain answers when compressed ones are turned off; accepts gzip by default', async () => {
    const id = { catalog: 'lake', namespace: ['a', 'x', 'deep'], name: 't2' };
    const plain = catalog({ compressedResponses: false });
    expect((await plain.loadTable(id)).status).toBe('loaded');
    // Every call of the client, the config call included.
    expect(fake.requests.map((r) => r.headers['accept-encoding'])).toEqual([
      'identity',
      'identity',
    ]);
    fake.reset();
    expect((await catalog().loadTable(id)).status).toBe('loaded');
    expect(fake.requests.map((r) => r.headers['accept-encoding'])).toEqual([
      expect.stringContaining('gzip'),
      expect.stringContaining('gzip'),
    ]);
  });

  it("fetches a table's vended credentials again from its credentials endpoint", async () => {
    const credentials = await catalog().loadCredentials({
      catalog: 'lake',
      namespace: ['a'],
      name: 't1',
    });
    expect(credentials).toEqual([
      {
        prefix: 's3://bucket/wh/t1/',
        config: { 's3.access-key-id': 'fresh', 's3.session-token-expires-at-ms': '99' },
      },
    ]);
    expect(fake.requests.at(-1)!.path).toBe('/v1/wh1/namespaces/a/tables/t1/credentials');
  });

  it('retries 429 (honouring Retry-After) and 503, then succeeds', async () => {
    fake.failures.push(
      { path: /\/tables$/, status: 429, headers: { 'retry-after': '2' } },
      { path: /\/tables$/, status: 503 },
    );
    const tables = await catalog().listTables(['a']);
    expect(tables.map((t) => t.name)).toEqual(['top']);
    expect(delays[0]).toBe(2000);
    expect(delays).toHaveLength(2);
  });

  it('gives up after the last attempt with a retryable server error naming the call', async () => {
    for (let i = 0; i < 4; i++) fake.failures.push({ path: /\/tables$/, status: 503 });
    const error = await rejection(catalog().listTables(['a']));
    expect(error).toMatchObject({ kind: 'server', retryable: true });
    expect(error.message).toContain('listTables');
    expect(delays).toHaveLength(3);
  });

  it('a missing table is not-found naming the table; nothing is retried', async () => {
    const error = await rejection(
      catalog().loadTable({ catalog: 'lake', namespace: ['a'], name: 'nope' }),
    );
    expect(error).toMatchObject({ kind: 'not-found', retryable: false });
    expect(error.message).toContain('lake.a.nope');
    expect(delays).toHaveLength(0);
  });

  it('a rejected bearer token is an unauthorized error', async () => {
    fake.bearer = 'Bearer right';
    const error = await rejection(
      catalog({ auth: { type: 'bearer', token: 'wrong' } }).listNamespaces(),
    );
    expect(error).toMatchObject({ kind: 'unauthorized', retryable: false });
    expect(
      await catalog({ auth: { type: 'bearer', token: 'right' } }).listNamespaces(),
    ).toHaveLength(2);
  });

  it('OAuth2 client credentials: fetches a token, refreshes it before expiry and after a 401', async () => {
    let now = 1_000_000;
    const c = catalog({
      auth: { type: 'oauth2', credential: 'icepack:s3cret', serverUri: `${fake.uri}/oauth/token` },
      now: () => now,
    });
    await c.listNamespaces();
    expect(c.tokensFetched).toBe(1);
    expect(fake.requests.at(-1)!.headers.authorization).toBe('Bearer tok-1');
    const tokenRequest = fake.requests.find((r) => r.path === '/oauth/token')!;
    expect(tokenRequest.method).toBe('POST');

    now += 3600_000 - 30_000; // inside the refresh margin
    await c.listNamespaces();
    expect(c.tokensFetched).toBe(2);
    expect(fake.requests.at(-1)!.headers.authorization).toBe('Bearer tok-2');

    fake.revoked.add('Bearer tok-2');
    fake.tokens++; // the server moved on to tok-3
    await c.listNamespaces(['a']);
    expect(fake.requests.at(-1)!.headers.authorization).toBe('Bearer tok-4');
  });

  it('a wrong client secret is an unauthorized error from the token call', async () => {
    const c = catalog({
      auth: { type: 'oauth2', credential: 'icepack:nope', serverUri: `${fake.uri}/oauth/token` },
    });
    const error = await rejection(c.listNamespaces());
    expect(error.kind).toBe('unauthorized');
    expect(error.message).not.toContain('nope');
  });

  it('an unreachable catalog is a retryable connection error', async () => {
    const c = new RestCatalog({
      name: 'lake',
      uri: 'http://127.0.0.1:1',
      retry: { maxAttempts: 2, baseDelayMs: 1 },
      sleep: async () => {},
    });
    const error = await rejection(c.listNamespaces());
    expect(error).toMatchObject({ kind: 'connection', retryable: true });
    expect(error.message).toContain('getConfig');
  });

  it('follows no redirect: neither a catalog call nor the token request reaches the Location', async () => {
    // The catalog URI passed the link-local check; a Location (here another server standing in
    // for 169.254.169.254) did not, so it must not be called, with or without the secret.
    const reached: string[] = [];
    const target = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        reached.push(`${req.method} ${req.url} ${body}`);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"AccessKeyId":"metadata-credential","overrides":{},"defaults":{}}');
      });
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const location = `http://127.0.0.1:${(target.address() as AddressInfo).port}/latest/meta-data`;
    const redirecting = createServer((req, res) => {
      req.resume();
      res.writeHead(req.method === 'POST' ? 307 : 302, { location });
      res.end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    const uri = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`;
    try {
      const plain = new RestCatalog({ name: 'lake', uri, retry: { maxAttempts: 1 } });
      const error = await rejection(plain.config());
      expect(error).toMatchObject({ kind: 'bad-response', context: { status: 302 } });
      expect(error.message).toContain('redirect not followed');
      const oauth = new RestCatalog({
        name: 'lake',
        uri: fake.uri,
        auth: { type: 'oauth2', credential: 'icepack:s3cret', serverUri: `${uri}/oauth/token` },
        retry: { maxAttempts: 1 },
      });
      expect((await rejection(oauth.config())).message).toContain('HTTP 307');
      expect(reached).toEqual([]);
    } finally {
      redirecting.close();
      target.close();
    }
  });

  describe('refuses a property value the check refuses in any answer, before a storage client exists', () => {
    // Stands in for the catalog access policy (`propertyValueProblem` of @icepack/runtime).
    const answerPropertyProblem = (value: string): string | undefined =>
      URL.canParse(value) && new URL(value).hostname === '169.254.169.254'
        ? '169.254.169.254 is a link-local address'
        : undefined;
    const id = { catalog: 'lake', namespace: ['a', 'x', 'deep'], name: 't2' };
    // Credentials in the URL: the message must not repeat them.
    const metadata = 'http://AKIAEXAMPLE:hunter2@169.254.169.254/latest/';

    it.each<[AnswerPart, string, string]>([
      ['defaults', 'config defaults', 'getConfig'],
      ['overrides', 'config overrides', 'getConfig'],
      ['table', 'table config', 'loadTable'],
      ['credential', 'storage credential for s3://bucket/wh/', 'loadTable'],
    ])('s3.endpoint in the %s', async (part, answer, call) => {
      fake.extra = { [part]: { 's3.endpoint': metadata } };
      const error = await rejection(catalog({ answerPropertyProblem }).loadTable(id));
      expect(error).toMatchObject({ kind: 'bad-response', retryable: false, context: { call } });
      expect(error.message).toContain(
        `the catalog's ${answer} set s3.endpoint to an address that may not be called: 169.254.169.254 is a link-local address`,
      );
      expect(error.message).not.toMatch(/AKIAEXAMPLE|hunter2/);
      // The same answer is used as it comes without the check (the library's default).
      expect((await catalog().loadTable(id)).status).toBe('loaded');
    });

    it('in the credentials fetched again for a prefix', async () => {
      fake.extra = { refreshed: { 's3.signer.uri': metadata } };
      const error = await rejection(catalog({ answerPropertyProblem }).loadCredentials(id));
      expect(error.message).toContain(
        "the catalog's storage credential for s3://bucket/wh/t2/ set s3.signer.uri to an address that may not be called",
      );
    });

    it('loads a table whose answers pass the check', async () => {
      const outcome = await catalog({ answerPropertyProblem }).loadTable(id);
      expect(outcome.status === 'loaded' && outcome.table.config['s3.endpoint']).toBe(
        'http://127.0.0.1:1',
      );
    });
  });

  it('a hung catalog is a timeout error', async () => {
    const hung = createServer(() => {
      /* never answers */
    });
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    try {
      const c = new RestCatalog({
        name: 'lake',
        uri: `http://127.0.0.1:${(hung.address() as AddressInfo).port}`,
        timeoutMs: 100,
        retry: { maxAttempts: 1 },
      });
      expect((await rejection(c.config())).kind).toBe('timeout');
    } finally {
      hung.closeAllConnections();
      hung.close();
    }
  });
});
