// The REST client against a real catalog that enforces OAuth2 client credentials (issue 20):
// Nessie's Iceberg REST API, whose tokens Keycloak issues (deploy/local/oauth-catalog.sh,
// docs/decisions/0030-real-oauth2-catalog.md). Not the test stand-in (oauth2-catalog-proxy):
// here the token is a JWT that the catalog verifies against the issuer's keys.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { runLocalScript } from '@icepack/test';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { IcebergErrorKind } from '../errors/iceberg-error.ts';
import { rejectedIcebergError } from '../testing/iceberg-error-of.ts';
import { RestCatalog } from './rest-catalog.ts';

const infra = inject('infra');
const oauth = infra.oauthCatalog;
const suffix = randomBytes(4).toString('hex');
const namespace = [`oauth_${suffix}`];
const tableName = 'events';

/** A token from Keycloak, the way any client gets one (to seed and clean up by hand). */
async function fetchToken(secret: string): Promise<string> {
  const response = await fetch(oauth.tokenUri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: oauth.clientId,
      client_secret: secret,
      scope: 'catalog',
    }).toString(),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

describe('a real catalog that enforces OAuth2 client credentials (Nessie + Keycloak)', () => {
  let secret = '';
  let token = '';
  let base = '';
  let createdUuid = '';

  const call = async (method: string, path: string, body?: unknown): Promise<Response> =>
    fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  beforeAll(async () => {
    // Not part of `infra.sh up` (two JVMs, Keycloak ~1–2.5 min to start on this machine):
    // started on demand and left running like the S3 catalog.
    const { code, output } = await runLocalScript('oauth-catalog.sh', ['up']);
    if (code !== 0)
      throw new Error(
        `deploy/local/oauth-catalog.sh up (Keycloak and Nessie) failed (exit ${String(code)}):\n${output.trim()}`,
      );
    secret = (await readFile(oauth.clientSecretFile, 'utf8')).trim();
    token = await fetchToken(secret);
    const config = await fetch(`${oauth.uri}/v1/config?warehouse=${oauth.warehouse}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(config.status).toBe(200);
    const { defaults, overrides } = (await config.json()) as {
      defaults: Record<string, string>;
      overrides: Record<string, string>;
    };
    // Nessie's prefix is `{ref}|{warehouse}`, sent already percent-encoded.
    base = `${oauth.uri}/v1/${overrides.prefix ?? defaults.prefix ?? ''}`;
    expect((await call('POST', '/namespaces', { namespace })).status).toBe(200);
    const created = await call('POST', `/namespaces/${namespace[0]!}/tables`, {
      name: tableName,
      'stage-create': false,
      schema: {
        type: 'struct',
        'schema-id': 0,
        fields: [
          { id: 1, name: 'id', required: true, type: 'long' },
          { id: 2, name: 'payload', required: false, type: 'string' },
        ],
      },
    });
    expect(created.status).toBe(200);
    createdUuid = ((await created.json()) as { metadata: { 'table-uuid': string } }).metadata[
      'table-uuid'
    ];
  });

  afterAll(async () => {
    if (base === '') return;
    await call('DELETE', `/namespaces/${namespace[0]!}/tables/${tableName}`);
    await call('DELETE', `/namespaces/${namespace[0]!}`);
  });

  const client = (auth: ConstructorParameters<typeof RestCatalog>[0]['auth']): RestCatalog =>
    new RestCatalog({
      name: `oauth${suffix}`,
      uri: oauth.uri,
      warehouse: oauth.warehouse,
      ...(auth === undefined ? {} : { auth }),
      retry: { maxAttempts: 1 },
    });

  it('lists and loads the table with a client-credentials token from the issuer', async () => {
    const catalog = client({
      type: 'oauth2',
      credential: `${oauth.clientId}:${secret}`,
      serverUri: oauth.tokenUri,
    });
    try {
      const tables = await catalog.listTables(namespace);
      expect(tables.map((t) => t.name)).toEqual([tableName]);
      const outcome = await catalog.loadTable(tables[0]!);
      expect(outcome.status).toBe('loaded');
      if (outcome.status !== 'loaded') return;
      const { metadata, metadataLocation } = outcome.table;
      // The very table created above, as the catalog wrote it to the S3 store.
      expect(metadata.tableUuid).toBe(createdUuid);
      expect(metadataLocation).toMatch(
        new RegExp(`^s3://${infra.s3Bucket}/oauth-warehouse/${namespace[0]!}/${tableName}_`),
      );
      const schema = metadata.schemas.get(metadata.currentSchemaId);
      expect([...(schema?.columnNames.values() ?? [])]).toEqual(['id', 'payload']);
      expect(metadata.currentSnapshotId).toBeNull();
    } finally {
      catalog.close();
    }
  });

  it('is refused without a token, with a forged token and with a wrong client secret', async () => {
    const anonymous = client(undefined);
    const none = await rejectedIcebergError(anonymous.listTables(namespace));
    expect(none.kind).toBe(IcebergErrorKind.unauthorized);
    anonymous.close();

    // A well-formed JWT the issuer did not sign: the catalog checks signatures, not shapes.
    const [header, payload] = token.split('.');
    const forged = client({ type: 'bearer', token: `${header!}.${payload!}.${'A'.repeat(43)}` });
    expect((await rejectedIcebergError(forged.listTables(namespace))).kind).toBe(
      IcebergErrorKind.unauthorized,
    );
    forged.close();

    const wrong = client({
      type: 'oauth2',
      credential: `${oauth.clientId}:not-${secret}`,
      serverUri: oauth.tokenUri,
    });
    const rejected = await rejectedIcebergError(wrong.listTables(namespace));
    expect(rejected.kind).toBe(IcebergErrorKind.unauthorized);
    expect(rejected.message).toContain('token request rejected with HTTP 401');
    expect(rejected.message).not.toContain(secret);
    wrong.close();
  });
});
