import { spawn, type ChildProcess } from 'node:child_process';
import {
  createServer as createHttpServer,
  request as forward,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { stringifyJson } from '@icepack/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestCatalog } from '../catalog/rest-catalog.ts';
import type { RestCatalogOptions } from '../catalog/rest-catalog-options.ts';
import { IcebergError } from '../errors/iceberg-error.ts';
import { currentSnapshot } from '../metadata/snapshot-history.ts';
import { decodeManifestList } from '../manifest/manifest-list-reader.ts';
import { encodeManifest, encodeManifestList } from '../testing/manifest-writer.ts';
import { TableFileIO } from './table-file-io.ts';

// A real S3 protocol server (moto, from PyPI, installed into the cached venv by moto.sh).
const script = resolve(import.meta.dirname, '..', '..', 'test-support', 'moto.sh');
let moto: ChildProcess;
let endpoint = '';

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

async function waitForHttp(url: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      await fetch(url);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`moto not up at ${url}`, { cause: error });
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

const credentials = { 's3.access-key-id': 'test', 's3.secret-access-key': 'test' };

beforeAll(async () => {
  const port = await freePort();
  endpoint = `http://127.0.0.1:${port}`;
  moto = spawn('bash', [script, String(port)], { stdio: ['ignore', 'ignore', 'inherit'] });
  await waitForHttp(endpoint, 280_000);
  const s3 = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  await s3.send(new CreateBucketCommand({ Bucket: 'lake' }));
  const list = encodeManifestList(2, [
    {
      path: 's3://lake/wh/t/metadata/m0.avro',
      length: 123,
      sequenceNumber: '7',
      addedSnapshotId: '8744736658442914487',
    },
  ]);
  await s3.send(
    new PutObjectCommand({ Bucket: 'lake', Key: 'wh/t/metadata/snap-1.avro', Body: list }),
  );
  await s3.send(
    new PutObjectCommand({ Bucket: 'lake', Key: 'wh/t/hello.txt', Body: 'hello iceberg' }),
  );
  await putScannedTable(s3);
  s3.destroy();
}, 300_000);

afterAll(() => {
  moto?.kill('SIGTERM');
});

const SNAPSHOT_ID = '7000000000001000003';
const TABLE_LOCATION = 's3://lake/wh/scanned';

/** A one-snapshot table (two data files) whose manifest list and manifest live on moto. */
async function putScannedTable(s3: S3Client): Promise<void> {
  const manifest = encodeManifest({
    formatVersion: 2,
    entries: [1, 2].map((n) => ({
      path: `${TABLE_LOCATION}/data/f${n}.parquet`,
      recordCount: 10 * n,
      sizeBytes: 1000 * n,
    })),
  });
  const list = encodeManifestList(2, [
    {
      path: `${TABLE_LOCATION}/metadata/m0.avro`,
      length: manifest.length,
      sequenceNumber: '1',
      addedSnapshotId: SNAPSHOT_ID,
      addedFiles: 2,
      addedRows: 30,
    },
  ]);
  const put = (key: string, body: Uint8Array) =>
    s3.send(new PutObjectCommand({ Bucket: 'lake', Key: `wh/scanned/${key}`, Body: body }));
  await put('metadata/m0.avro', manifest);
  await put('metadata/snap-1.avro', list);
}

/** The table's metadata, as a REST catalog returns it in a LoadTableResult. */
function scannedMetadata(): unknown {
  return {
    'format-version': 2,
    'table-uuid': '3f9d0c52-2d0e-4c1b-9a52-7d2cf1c1b0aa',
    location: TABLE_LOCATION,
    'last-sequence-number': 1,
    'last-updated-ms': 1_790_000_000_000,
    'last-column-id': 1,
    'current-schema-id': 0,
    schemas: [
      {
        type: 'struct',
        'schema-id': 0,
        fields: [{ id: 1, name: 'id', required: false, type: 'long' }],
      },
    ],
    'default-spec-id': 0,
    'partition-specs': [{ 'spec-id': 0, fields: [] }],
    'last-partition-id': 999,
    'default-sort-order-id': 0,
    'sort-orders': [{ 'order-id': 0, fields: [] }],
    properties: {},
    'current-snapshot-id': BigInt(SNAPSHOT_ID),
    refs: { main: { 'snapshot-id': BigInt(SNAPSHOT_ID), type: 'branch' } },
    snapshots: [
      {
        'snapshot-id': BigInt(SNAPSHOT_ID),
        'sequence-number': 1,
        'timestamp-ms': 1_790_000_000_000,
        'manifest-list': `${TABLE_LOCATION}/metadata/snap-1.avro`,
        summary: { operation: 'append' },
        'schema-id': 0,
      },
    ],
    'snapshot-log': [],
    'metadata-log': [],
  };
}

interface Listening {
  readonly uri: string;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<Listening> {
  await new Promise<void>((up) => server.listen(0, '127.0.0.1', up));
  const { port } = server.address() as AddressInfo;
  return {
    uri: `http://127.0.0.1:${String(port)}`,
    close: () =>
      new Promise<void>((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}

/**
 * An HTTP proxy in front of moto that counts the TCP connections its clients open. moto
 * answers each object's first GET; a repeat (same URL and range) is answered from the proxy's
 * memory, since moto takes ~15 ms per request here and the count is about the client's
 * connections, not the server.
 */
async function countingS3Proxy(): Promise<Listening & { connections: () => number }> {
  const target = new URL(endpoint);
  let connections = 0;
  const answers = new Map<string, { status: number; headers: IncomingHttpHeaders; body: Buffer }>();
  const reply = (
    res: ServerResponse,
    answer: { status: number; headers: IncomingHttpHeaders; body: Buffer },
  ) => {
    // moto closes its connection after each answer; the client's stays open.
    const headers = { ...answer.headers };
    delete headers.connection;
    delete headers['keep-alive'];
    res.writeHead(answer.status, headers).end(answer.body);
  };
  const server = createHttpServer((req, res) => {
    const key = `${req.method ?? ''} ${req.url ?? ''} ${req.headers.range ?? ''}`;
    const known = answers.get(key);
    if (known !== undefined) {
      req.resume();
      reply(res, known);
      return;
    }
    const out = forward(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (upstream) => {
        const chunks: Buffer[] = [];
        upstream.on('data', (chunk: Buffer) => chunks.push(chunk));
        upstream.on('end', () => {
          const answer = {
            status: upstream.statusCode ?? 502,
            headers: upstream.headers,
            body: Buffer.concat(chunks),
          };
          if (req.method === 'GET' && answer.status < 300) answers.set(key, answer);
          reply(res, answer);
        });
      },
    );
    out.on('error', () => res.writeHead(502).end());
    req.pipe(out);
  });
  server.keepAliveTimeout = 600_000;
  server.on('connection', () => connections++);
  return { ...(await listen(server)), connections: () => connections };
}

/**
 * A stand-in REST catalog serving the table above: `GET /v1/config` and load table. Its load
 * answers carry the S3 endpoint, and, when `vend` says so, credentials for the table's
 * location that change with every load (as STS session credentials do).
 */
async function stubCatalog(s3Endpoint: string, vend: boolean): Promise<Listening> {
  let loads = 0;
  const server = createHttpServer((req, res) => {
    req.resume();
    res.setHeader('content-type', 'application/json');
    if (req.url?.startsWith('/v1/config') === true) {
      res.end(JSON.stringify({ defaults: {}, overrides: {} }));
      return;
    }
    loads++;
    res.end(
      stringifyJson({
        'metadata-location': `${TABLE_LOCATION}/metadata/00000.metadata.json`,
        metadata: scannedMetadata(),
        config: {
          's3.endpoint': s3Endpoint,
          's3.path-style-access': 'true',
          'client.region': 'us-east-1',
        },
        ...(vend
          ? {
              'storage-credentials': [
                {
                  prefix: `${TABLE_LOCATION}/`,
                  config: {
                    's3.access-key-id': `ASIA${String(loads)}`,
                    's3.secret-access-key': `secret-${String(loads)}`,
                    's3.session-token': `token-${String(loads)}`,
                    's3.session-token-expires-at-ms': String(Date.now() + 3_600_000 + loads),
                  },
                },
              ],
            }
          : {}),
      }),
    );
  });
  server.keepAliveTimeout = 600_000;
  return listen(server);
}

/**
 * A scan's S3 side: load the table, read its current manifest list through the loaded
 * table's FileIO (what a scan of a changed table starts with; the manifests are read the
 * same way, and left out to keep 1,000 scans cheap).
 */
async function scanMany(catalog: RestCatalog, scans: number): Promise<void> {
  const id = { catalog: 's3pool', namespace: ['s3test'], name: 'scanned' };
  for (let i = 0; i < scans; i++) {
    const outcome = await catalog.loadTable(id);
    if (outcome.status !== 'loaded') throw new Error('no etag was sent');
    const list = currentSnapshot(outcome.table.metadata)!.manifestList!;
    const manifests = decodeManifestList(await outcome.table.io.read(list), list);
    if (manifests.length !== 1) throw new Error(`scan ${String(i)}: ${String(manifests.length)}`);
  }
}

describe('S3 FileIO against a real S3 protocol server', () => {
  it('reads whole objects and ranges with endpoint override, path-style access and vended credentials', async () => {
    const io = new TableFileIO({
      properties: {
        's3.endpoint': endpoint,
        's3.path-style-access': 'true',
        'client.region': 'us-east-1',
      },
      storageCredentials: [{ prefix: 's3://lake/wh/', config: credentials }],
    });
    try {
      const list = await io.read('s3://lake/wh/t/metadata/snap-1.avro');
      expect(decodeManifestList(list, 's3://lake/wh/t/metadata/snap-1.avro')).toEqual([
        expect.objectContaining({
          path: 's3://lake/wh/t/metadata/m0.avro',
          addedSnapshotId: '8744736658442914487',
        }),
      ]);
      expect(Buffer.from(await io.readRange('s3a://lake/wh/t/hello.txt', 6, 4)).toString()).toBe(
        'iceb',
      );
    } finally {
      io.destroy();
    }
  });

  it('a missing object is a not-found error naming the file', async () => {
    const io = new TableFileIO({
      properties: { 's3.endpoint': endpoint, 's3.path-style-access': 'true', ...credentials },
    });
    try {
      const error = await io.read('s3://lake/wh/t/metadata/missing.avro').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(IcebergError);
      expect((error as IcebergError).kind).toBe('not-found');
      expect((error as IcebergError).message).toContain('s3://lake/wh/t/metadata/missing.avro');
    } finally {
      io.destroy();
    }
  });
});

/** Scans through a stand-in catalog and the counting proxy; what the client did. */
async function scansOnS3(
  scans: number,
  vend: boolean,
  s3: RestCatalogOptions['s3'] = {},
): Promise<{ connections: number; clients: number }> {
  const proxy = await countingS3Proxy();
  const stub = await stubCatalog(proxy.uri, vend);
  const catalog = new RestCatalog({ name: 's3pool', uri: stub.uri, s3 });
  try {
    await scanMany(catalog, scans);
    return { connections: proxy.connections(), clients: catalog.s3Clients.created };
  } finally {
    catalog.close();
    await stub.close();
    await proxy.close();
  }
}

describe("a catalog's S3 clients across scans", () => {
  it('1,000 scans share one S3 client: one connection, one credential resolution', async () => {
    let resolutions = 0;
    // Stands in for the SDK's default chain (web identity, instance profile …): counted.
    const defaultCredentials = () => {
      resolutions++;
      return Promise.resolve({ accessKeyId: 'test', secretAccessKey: 'test' });
    };
    // Each scan reads the manifest list: 1,000 S3 requests.
    const seen = await scansOnS3(1000, false, { defaultCredentials });
    expect(resolutions).toBe(1);
    expect(seen.clients).toBe(1);
    expect(seen.connections).toBeLessThanOrEqual(2);
  });

  it('credentials vended anew on every load refresh the one client of their prefix', async () => {
    const seen = await scansOnS3(50, true);
    expect(seen.clients).toBe(1);
    expect(seen.connections).toBeLessThanOrEqual(2);
  });
});
