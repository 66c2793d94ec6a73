import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { rejectedIcebergError } from '../testing/iceberg-error-of.ts';
import { DEFAULT_MAX_RESPONSE_BYTES } from './bounded-body.ts';
import { RestCatalog } from './rest-catalog.ts';

const infra = inject('infra');

describe('catalog responses are read with a size limit', () => {
  // A long name makes the real catalog's namespace listing larger than the small limit.
  const namespace = `limit_${randomBytes(4).toString('hex')}_${'n'.repeat(2000)}`;
  // A catalog that streams an endless config body (no content-length), and a token endpoint
  // that answers with a huge token: what a hostile catalog would do to exhaust memory.
  let hostile: Server;
  let hostileUri = '';
  let bytesSent = 0;

  beforeAll(async () => {
    const created = await fetch(`${infra.catalogUri}/v1/namespaces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ namespace: [namespace] }),
    });
    expect(created.status).toBe(200);
    hostile = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = (): void => {
        while (!res.destroyed && bytesSent < 256 * 2 ** 20) {
          bytesSent += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      req.resume();
      pump();
    });
    await new Promise<void>((done) => hostile.listen(0, '127.0.0.1', done));
    hostileUri = `http://127.0.0.1:${String((hostile.address() as AddressInfo).port)}`;
  });

  afterAll(async () => {
    await fetch(`${infra.catalogUri}/v1/namespaces/${namespace}`, { method: 'DELETE' });
    await new Promise((done) => hostile.close(done));
  });

  it('has a documented default of 64 MiB', () => {
    expect(DEFAULT_MAX_RESPONSE_BYTES).toBe(64 * 2 ** 20);
    expect(new RestCatalog({ name: 'x', uri: infra.catalogUri }).options.maxResponseBytes).toBe(
      DEFAULT_MAX_RESPONSE_BYTES,
    );
  });

  it('refuses a real catalog answer larger than the configured limit, naming the call and the limit', async () => {
    const small = new RestCatalog({
      name: 'lake',
      uri: infra.catalogUri,
      maxResponseBytes: 1024,
      retry: { maxAttempts: 1 },
    });
    const error = await rejectedIcebergError(small.listNamespaces());
    expect(error.kind).toBe('bad-response');
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/response body larger than the limit of 1024 bytes/);
    const ok = new RestCatalog({ name: 'lake', uri: infra.catalogUri });
    expect(await ok.listNamespaces()).toContainEqual([namespace]);
  });

  it('stops reading an endless body at the limit', async () => {
    const client = new RestCatalog({
      name: 'hostile',
      uri: hostileUri,
      maxResponseBytes: 2 * 2 ** 20,
      retry: { maxAttempts: 1 },
    });
    const error = await rejectedIcebergError(client.listNamespaces());
    expect(error.kind).toBe('bad-response');
    expect(error.message).toMatch(/limit of 2097152 bytes/);
    expect(bytesSent).toBeLessThan(256 * 2 ** 20);
  });

  it('reads an OAuth2 token answer with the same limit', async () => {
    const client = new RestCatalog({
      name: 'hostile',
      uri: hostileUri,
      maxResponseBytes: 2 * 2 ** 20,
      auth: { type: 'oauth2', credential: 'id:secret', serverUri: `${hostileUri}/token` },
      retry: { maxAttempts: 1 },
    });
    const error = await rejectedIcebergError(client.listNamespaces());
    expect(error.message).toMatch(/limit of 2097152 bytes/);
    expect(error.context.call).toBe('POST oauth2 token');
  });
});
