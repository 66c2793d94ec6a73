import { randomUUID } from 'node:crypto';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { tempDir } from '@icepack/test';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { LocalCluster } from './adapters/local-cluster.ts';
import type { CatalogView } from './domain/catalog-record.ts';
import { startTestProvisioner } from './testing/test-provisioner.ts';
import type { ApiError, TestProvisioner } from './testing/test-provisioner.ts';

const infra = inject('infra');
const cleanups: (() => Promise<unknown> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A catalog stand-in that records the Authorization header of every request it gets. */
async function recordingCatalog(): Promise<{ uri: string; authorizations: (string | null)[] }> {
  const authorizations: (string | null)[] = [];
  const server = createServer((req, res) => {
    authorizations.push(req.headers.authorization ?? null);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end('{"defaults":{},"overrides":{}}');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  cleanups.push(() => new Promise((done) => server.close(done)));
  return {
    uri: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`,
    authorizations,
  };
}

async function provisioner(access?: {
  secretEnvPrefix: string;
  secretsDir: string;
  allowLinkLocal: boolean;
}): Promise<TestProvisioner> {
  const p = await startTestProvisioner({
    infra,
    cluster: new LocalCluster({ allocatable: { cpuMillis: 4000, memoryBytes: 16 * 2 ** 30 } }),
    ...(access === undefined ? {} : { access }),
  });
  cleanups.push(() => p.stop());
  return p;
}

function fieldsOf(body: ApiError): string[] {
  return (body.fields ?? []).map((f) => f.path);
}

describe('catalog registration and the services’ own secrets', () => {
  it('cannot make the provisioner send its environment, its files or a Secret outside the secrets directory to the caller’s URI', async () => {
    const suffix = randomUUID().slice(0, 8);
    const catalog = await recordingCatalog();
    // What an attacker with an API token is after: a REDIS_URL-like variable of the
    // provisioner, a ServiceAccount-token-like file, a Secret path with `..`.
    const redisVar = `H6_REDIS_URL_${suffix.toUpperCase()}`;
    process.env[redisVar] = `redis://:redis-password-${suffix}@redis:6379`;
    cleanups.push(() => {
      delete process.env[redisVar];
    });
    const saDir = tempDir('icepack-h6-serviceaccount-');
    const saToken = join(saDir, 'token');
    writeFileSync(saToken, `sa-token-${suffix}\n`);
    const p = await provisioner();

    const attempts = [
      { token: { env: redisVar }, field: 'auth.token' },
      { token: { file: saToken }, field: 'auth.token' },
      { token: { secret: { name: '..', key: 'x' } }, field: 'auth.token.secret.name' },
      { token: { secret: { name: 'icepack', key: '../../x' } }, field: 'auth.token.secret.key' },
      {
        token: { file: '/var/run/secrets/icepack/../kubernetes.io/serviceaccount/token' },
        field: 'auth.token.file',
      },
    ];
    for (const [i, attempt] of attempts.entries()) {
      const response = await p.api('POST', '/v1/catalogs', {
        name: `exfil-${String(i)}-${suffix}`,
        type: 'rest',
        uri: catalog.uri,
        auth: { type: 'bearer', token: attempt.token },
      });
      // Nothing was sent anywhere: the catalog was not even called.
      expect(catalog.authorizations).toEqual([]);
      expect(response.status, JSON.stringify(attempt.token)).toBe(400);
      expect(fieldsOf(response.body)).toContain(attempt.field);
      expect(JSON.stringify(response.body)).not.toContain(`redis-password-${suffix}`);
      expect(JSON.stringify(response.body)).not.toContain(`sa-token-${suffix}`);
    }
  });

  it('sends an allowed credential only once the operator opts the catalog in, and never through a symlink out of the secrets directory', async () => {
    const suffix = randomUUID().slice(0, 8);
    const catalog = await recordingCatalog();
    const secretsDir = tempDir('icepack-h6-secrets-');
    const outside = tempDir('icepack-h6-outside-');
    writeFileSync(join(outside, 'token'), `outside-${suffix}`);
    mkdirSync(join(secretsDir, 'lake'));
    symlinkSync(join(outside, 'token'), join(secretsDir, 'lake', 'escape'));
    const allowedVar = `ICEPACK_SECRET_H6_${suffix.toUpperCase()}`;
    process.env[allowedVar] = `catalog-token-${suffix}`;
    cleanups.push(() => {
      delete process.env[allowedVar];
    });
    const p = await provisioner({
      secretEnvPrefix: 'ICEPACK_SECRET_',
      secretsDir,
      allowLinkLocal: false,
    });
    const name = `optin-${suffix}`;
    const definition = {
      name,
      type: 'rest',
      uri: catalog.uri,
      auth: { type: 'bearer', token: { env: allowedVar } },
    };

    const created = await p.api<CatalogView>('POST', '/v1/catalogs', definition);
    expect(created.status).toBe(201);
    expect(created.body.status.connectivity.ok).toBe(true);
    expect(catalog.authorizations).toEqual([null]);

    const optedIn = await p.api<CatalogView>('PUT', `/v1/catalogs/${name}`, {
      ...definition,
      probeCredentials: true,
    });
    expect(optedIn.status).toBe(200);
    expect(catalog.authorizations).toEqual([null, `Bearer catalog-token-${suffix}`]);

    const escaping = await p.api<CatalogView>('PUT', `/v1/catalogs/${name}`, {
      ...definition,
      auth: { type: 'bearer', token: { secret: { name: 'lake', key: 'escape' } } },
      probeCredentials: true,
    });
    expect(escaping.status).toBe(200);
    expect(escaping.body.status.connectivity).toMatchObject({ ok: false });
    expect(escaping.body.status.connectivity.message).toMatch(/outside the secrets directory/);
    expect(catalog.authorizations).toEqual([null, `Bearer catalog-token-${suffix}`]);
  });

  it.each([
    ['uri', 'http://169.254.169.254/latest'],
    ['uri', 'http://metadata.google.internal'],
    ['uri', 'http://[fe80::1]:8181'],
    ['uri', 'http://[fd00:ec2::254]'],
    ['auth.serverUri', 'http://169.254.170.2/v2/credentials'],
  ])('refuses a catalog whose %s is %s (link-local or cloud metadata)', async (field, uri) => {
    const p = await provisioner();
    const name = `meta-${randomUUID().slice(0, 8)}`;
    const body =
      field === 'uri'
        ? { name, type: 'rest', uri }
        : {
            name,
            type: 'rest',
            uri: infra.catalogUri,
            auth: { type: 'oauth2', serverUri: uri, clientSecret: { env: 'ICEPACK_SECRET_X' } },
          };
    const response = await p.api('POST', '/v1/catalogs', body);
    expect(response.status).toBe(400);
    expect(fieldsOf(response.body)).toEqual([field]);
    expect((await p.api('GET', `/v1/catalogs/${name}`)).status).toBe(404);
  });
});
