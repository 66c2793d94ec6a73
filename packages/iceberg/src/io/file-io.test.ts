import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { tempDir } from '@icepack/test';
import { describe, expect, it } from 'vitest';
import { LocalFileIO, localPath } from './local-file-io.ts';
import { parseS3Location, S3FileIO, s3OptionsFromProperties } from './s3-file-io.ts';
import { credentialFor } from './storage-credentials.ts';
import { TableFileIO } from './table-file-io.ts';
import { rejectedIcebergError as rejection } from '../testing/iceberg-error-of.ts';

describe('TableFileIO', () => {
  it('reads local files by plain path, file:/ and file:/// and ranges of them', async () => {
    const dir = tempDir('icepack-io-');
    const path = join(dir, 'odd name %20.txt');
    await writeFile(path, 'hello iceberg');
    const io = new TableFileIO();
    for (const location of [path, `file:${path}`, `file://${path}`]) {
      expect(Buffer.from(await io.read(location)).toString()).toBe('hello iceberg');
    }
    expect(Buffer.from(await io.readRange(`file:${path}`, 6, 4)).toString()).toBe('iceb');
    expect(Buffer.from(await io.readRange(path, 10, 100)).toString()).toBe('erg');
  });

  it('a missing file is a not-found error naming the file', async () => {
    const error = await rejection(new TableFileIO().read('file:/nonexistent/icepack/m.avro'));
    expect(error.kind).toBe('not-found');
    expect(error.context.file).toBe('file:/nonexistent/icepack/m.avro');
    expect(error.message).toContain('/nonexistent/icepack/m.avro');
  });

  it('a cancelled or failing local read is an error naming the file', async () => {
    const dir = tempDir('icepack-io-');
    const path = join(dir, 'm.avro');
    await writeFile(path, 'manifest');
    const cancelled = await rejection(new TableFileIO().read(path, AbortSignal.abort()));
    expect(cancelled.kind).toBe('io');
    expect(cancelled.context.file).toBe(path);
    // A directory cannot be read as a file: an io error, not a crash of the reader.
    const directory = await rejection(new TableFileIO().read(`file:${dir}`));
    expect(directory.kind).toBe('io');
    expect(directory.message).toContain('EISDIR');
    expect(directory.context.file).toBe(`file:${dir}`);
  });

  it('refuses file: and plain paths for a catalog not configured as local (issue 16)', async () => {
    const dir = tempDir('icepack-io-');
    const path = join(dir, 'secret.txt');
    await writeFile(path, 'the service’s own file');
    const io = new TableFileIO({ localFiles: false, catalog: 'remote' });
    for (const location of [path, `file:${path}`, `file://${path}`]) {
      const error = await rejection(io.read(location));
      expect(error.kind).toBe('unsupported');
      expect(error.message).toContain('catalog remote: it is not configured as local');
      expect(error.context.file).toBe(location);
      await expect(io.readRange(location, 0, 4)).rejects.toThrow('not configured as local');
    }
  });

  it('any other scheme is an unsupported error naming the scheme', async () => {
    const error = await rejection(
      new TableFileIO().read('gs://bucket/t/metadata/v1.metadata.json'),
    );
    expect(error.kind).toBe('unsupported');
    expect(error.message).toContain('"gs"');
  });
});

describe("whole-file reads are bounded (a location is the catalog's word)", () => {
  it('refuses an S3 object above the limit, announced or streamed without a length', async () => {
    let sent = 0;
    const server = createServer((req, res) => {
      const chunk = Buffer.alloc(64 * 1024, 1);
      if (req.url?.includes('small') === true) {
        res.end('manifest');
        return;
      }
      if (req.url?.includes('announced') === true) {
        res.writeHead(200, { 'content-length': String(1024 ** 3) });
        res.write(chunk);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream' }); // chunked, endless
      const more = (): void => {
        while (!res.destroyed && res.write(chunk)) sent += chunk.length;
        if (!res.destroyed) res.once('drain', more);
      };
      more();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const io = new S3FileIO({
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      pathStyle: true,
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      maxReadBytes: 1024 * 1024,
    });
    try {
      for (const key of ['announced/snap.avro', 'endless/snap.avro']) {
        const error = await rejection(io.read(`s3://bucket/${key}`));
        expect(error).toMatchObject({
          kind: 'corrupt-file',
          context: { file: `s3://bucket/${key}` },
        });
        expect(error.message).toContain('limit of 1048576 bytes');
      }
      expect(sent).toBeLessThan(64 * 1024 * 1024);
      expect(Buffer.from(await io.read('s3://bucket/small/snap.avro')).toString()).toBe('manifest');
    } finally {
      io.destroy();
      server.closeAllConnections();
      server.close();
    }
  });

  it('refuses a local file above the limit, and a device that never ends', async () => {
    const dir = tempDir('icepack-io-');
    const path = join(dir, 'big.avro');
    await writeFile(path, Buffer.alloc(4096));
    const io = new LocalFileIO(1024);
    for (const location of [`file:${path}`, 'file:/dev/zero']) {
      const error = await rejection(io.read(location));
      expect(error).toMatchObject({ kind: 'corrupt-file', context: { file: location } });
    }
    expect((await new LocalFileIO(4096).read(path)).byteLength).toBe(4096);
  });
});

describe('locations and credentials', () => {
  it('maps file locations to paths without percent-decoding', () => {
    expect(localPath('file:///a/b%20c')).toBe('/a/b%20c');
    expect(localPath('file:/a/b')).toBe('/a/b');
    expect(localPath('file://localhost/a')).toBe('/a');
    expect(localPath('/plain')).toBe('/plain');
  });

  it('parses s3, s3a and s3n locations', () => {
    expect(parseS3Location('s3://bucket/a/b.avro')).toEqual({ bucket: 'bucket', key: 'a/b.avro' });
    expect(parseS3Location('s3a://bucket/k')).toEqual({ bucket: 'bucket', key: 'k' });
  });

  it('picks the storage credential with the longest matching prefix', () => {
    const credentials = [
      { prefix: 's3://bucket/', config: { 's3.access-key-id': 'wide' } },
      { prefix: 's3://bucket/warehouse/sales/', config: { 's3.access-key-id': 'narrow' } },
      { prefix: 's3://other/', config: { 's3.access-key-id': 'other' } },
    ];
    expect(
      credentialFor(credentials, 's3://bucket/warehouse/sales/orders/m.avro')?.config[
        's3.access-key-id'
      ],
    ).toBe('narrow');
    expect(
      credentialFor(credentials, 's3://bucket/warehouse/hr/m.avro')?.config['s3.access-key-id'],
    ).toBe('wide');
    expect(credentialFor(credentials, 's3://third/m.avro')).toBeUndefined();
    expect(
      credentialFor(credentials, 's3a://bucket/warehouse/sales/m.avro')?.config['s3.access-key-id'],
    ).toBe('narrow');
  });

  it('builds S3 options from Iceberg properties', () => {
    expect(
      s3OptionsFromProperties({
        's3.endpoint': 'http://127.0.0.1:9000',
        's3.path-style-access': 'true',
        's3.access-key-id': 'AK',
        's3.secret-access-key': 'SK',
        's3.session-token': 'ST',
        'client.region': 'eu-west-1',
      }),
    ).toEqual({
      region: 'eu-west-1',
      endpoint: 'http://127.0.0.1:9000',
      pathStyle: true,
      credentials: { accessKeyId: 'AK', secretAccessKey: 'SK', sessionToken: 'ST' },
    });
  });
});
