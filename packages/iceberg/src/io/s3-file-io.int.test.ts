import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IcebergError } from '../errors/iceberg-error.ts';
import { decodeManifestList } from '../manifest/manifest-list-reader.ts';
import { encodeManifestList } from '../testing/manifest-writer.ts';
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
  s3.destroy();
}, 300_000);

afterAll(() => {
  moto?.kill('SIGTERM');
});

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
