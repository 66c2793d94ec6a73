import { describe, expect, it } from 'vitest';
import { catalogSchema, parseCatalog } from './catalog.ts';
import { MessageType } from './message-types.ts';
import { createEnvelope, parseEnvelope } from './messages.ts';
import { looksLikeSecretKey } from './secret-ref.ts';
import { formatPath } from './validation-error.ts';

function issue(value: unknown): { path: string; message: string } | undefined {
  const result = catalogSchema.safeParse(value);
  if (result.success) return undefined;
  const first = result.error.issues[0];
  return { path: formatPath(first?.path ?? []), message: first?.message ?? '' };
}

const base = { name: 'prod', type: 'rest', uri: 'https://catalog.example.com/api/catalog' };

describe('catalogSchema', () => {
  it('applies defaults', () => {
    expect(catalogSchema.parse(base)).toEqual({ ...base, auth: { type: 'none' }, properties: {} });
  });

  it('accepts a storage location that names a container before the @ (ADLS, Azure Blob)', () => {
    const adls = 'abfss://lake@account.dfs.core.windows.net/warehouse';
    const parsed = catalogSchema.parse({
      ...base,
      warehouse: adls,
      properties: { 'adls.location': 'wasbs://lake@account.blob.core.windows.net/' },
    });
    expect(parsed.warehouse).toBe(adls);
  });

  it.each([
    [{ type: 'bearer', token: { env: 'PROD_CATALOG_TOKEN' } }],
    [{ type: 'bearer', token: { file: '/var/run/secrets/icepack/token' } }],
    [{ type: 'bearer', token: { secret: { name: 'prod-catalog', key: 'token' } } }],
    [
      {
        type: 'oauth2',
        serverUri: 'https://idp.example.com/oauth/token',
        clientId: 'icepack',
        clientSecret: { env: 'PROD_CLIENT_SECRET' },
        scope: 'PRINCIPAL_ROLE:ALL',
      },
    ],
  ])('accepts auth %j', (auth) => {
    expect(
      catalogSchema.parse({ ...base, warehouse: 'wh', auth, properties: { 'io-impl': 'x' } }).auth,
    ).toEqual(auth);
  });

  it.each([
    [
      { ...base, auth: { type: 'bearer', token: 'abc' } },
      'auth.token',
      /inline secret value rejected.*"env"/,
    ],
    [
      { ...base, auth: { type: 'oauth2', clientSecret: 's3cr3t' } },
      'auth.clientSecret',
      /inline secret/,
    ],
    [
      { ...base, auth: { type: 'bearer', token: { env: 'X', file: '/y' } } },
      'auth.token',
      /secret reference/,
    ],
    [
      { ...base, auth: { type: 'bearer', token: { env: 'not a name' } } },
      'auth.token.env',
      /environment variable/,
    ],
    [
      { ...base, auth: { type: 'bearer', token: { file: 'relative' } } },
      'auth.token.file',
      /absolute/,
    ],
    [
      { ...base, auth: { type: 'bearer', token: { file: '/var/run/secrets/icepack/../x' } } },
      'auth.token.file',
      /without "\." or "\.\." segments/,
    ],
    [
      { ...base, auth: { type: 'bearer', token: { secret: { name: '../x', key: 'k' } } } },
      'auth.token.secret.name',
      /DNS-1123/,
    ],
    [
      { ...base, auth: { type: 'bearer', token: { secret: { name: 'Lake', key: 'k' } } } },
      'auth.token.secret.name',
      /DNS-1123/,
    ],
    [
      { ...base, auth: { type: 'bearer', token: { secret: { name: 'lake', key: '../k' } } } },
      'auth.token.secret.key',
      /Secret key/,
    ],
    [
      { ...base, auth: { type: 'bearer', token: { secret: { name: 'lake', key: '..' } } } },
      'auth.token.secret.key',
      /not "\." or "\.\."/,
    ],
    [{ ...base, probeCredentials: 'yes' }, 'probeCredentials', /boolean/],
    [
      { ...base, properties: { 'header.Authorization': 'Bearer x' } },
      'properties["header.Authorization"]',
      /looks like a secret/,
    ],
    [{ ...base, auth: { type: 'basic' } }, 'auth.type', /.+/],
    [
      { ...base, properties: { credential: 'id:secret' } },
      'properties.credential',
      /looks like a secret/,
    ],
    [
      { ...base, properties: { 's3.secret-access-key': 'x' } },
      'properties["s3.secret-access-key"]',
      /looks like a secret/,
    ],
    [{ ...base, token: 'abc' }, '', /token/],
    [{ ...base, name: 'Prod_1' }, 'name', /DNS-1123/],
    [{ ...base, name: 'x'.repeat(64) }, 'name', /63/],
    [{ ...base, type: 'hive' }, 'type', /.+/],
    [{ ...base, uri: 'ftp://catalog' }, 'uri', /http/],
    [{ ...base, uri: 'not a url' }, 'uri', /http/],
    // Published on icepack.catalogs, logged, passed as --catalog-uri: no credentials in URLs.
    [{ ...base, uri: 'https://icepack:hunter2@catalog.example.com/' }, 'uri', /credentials/],
    [
      {
        ...base,
        auth: {
          type: 'oauth2',
          serverUri: 'https://icepack:hunter2@auth.example.com/token',
          clientSecret: { env: 'ICEPACK_SECRET_X' },
        },
      },
      'auth.serverUri',
      /credentials/,
    ],
    [{ ...base, warehouse: 's3://key:hunter2@bucket/wh' }, 'warehouse', /credentials/],
    [{ ...base, uri: 'https://hunter2@catalog.example.com/' }, 'uri', /credentials/],
    [
      { ...base, properties: { 's3.endpoint': 'http://minio:hunter2@minio:9000' } },
      'properties["s3.endpoint"]',
      /credentials/,
    ],
  ])('rejects %j at %s', (value, path, message) => {
    const found = issue(value);
    expect(found?.path).toBe(path);
    expect(found?.message).toMatch(message);
    expect(found?.message).not.toContain('hunter2');
  });
});

describe('looksLikeSecretKey', () => {
  it.each([
    ['credential', true],
    ['token', true],
    ['s3.session-token', true],
    ['adls.sas-token.account', true],
    ['gcs.oauth2.token', true],
    ['password', true],
    ['client-secret', true],
    ['header.Authorization', true],
    ['header.authorization', true],
    ['header.Cookie', true],
    ['header.X-Api-Key', true],
    ['adls.auth.shared-key.account.key', true],
    ['fs.azure.account.key.lake.dfs.core.windows.net', true],
    ['fs.azure.account.oauth2.client.secret', true],
    ['gcs.oauth2.refresh-token', true],
    ['header.X-Iceberg-Access-Delegation', false],
    ['adls.auth.shared-key.account.name', false],
    ['token-refresh-enabled', false],
    ['s3.access-key-id', false],
    ['oauth2-server-uri', false],
    ['io-impl', false],
  ])('%s → %s', (key, secret) => {
    expect(looksLikeSecretKey(key)).toBe(secret);
  });
});

describe('parseCatalog', () => {
  it('throws a ValidationError whose message names the field and never echoes the secret', () => {
    expect(() => parseCatalog({ ...base, auth: { type: 'bearer', token: 'hunter2' } })).toThrow(
      /^invalid catalog: auth\.token: inline secret value rejected/,
    );
    try {
      parseCatalog({ ...base, auth: { type: 'bearer', token: 'hunter2' } });
    } catch (error) {
      expect(String((error as Error).message)).not.toContain('hunter2');
    }
  });

  it('is published as CatalogDefined, where unknown top-level fields are ignored', () => {
    const envelope = createEnvelope(MessageType.CatalogDefined, 'prod', parseCatalog(base));
    const parsed = parseEnvelope({ ...envelope, payload: { ...envelope.payload, addedLater: 1 } });
    expect(parsed.payload).toEqual(parseCatalog(base));
  });

  // docs/messages.md, "Versioning": a field a newer provisioner adds must not dead-letter the
  // catalog on an older consumer, nested or not; the API body stays strict.
  it('is read from CatalogDefined with unknown fields in auth and policy ignored', () => {
    const catalog = parseCatalog({
      ...base,
      auth: { type: 'oauth2', clientSecret: { env: 'ICEPACK_SECRET_PROD' } },
      policy: { settings: { 'icepack.snapshot-threshold': '40' } },
    });
    const envelope = createEnvelope(MessageType.CatalogDefined, 'prod', catalog);
    const parsed = parseEnvelope({
      ...envelope,
      payload: {
        ...envelope.payload,
        auth: { ...catalog.auth, audience: 'added-later' },
        policy: { ...catalog.policy, tables: {} },
      },
    });
    expect(parsed.payload).toEqual(catalog);
    expect(() => parseCatalog({ ...base, auth: { type: 'none', audience: 'x' } })).toThrow(
      /auth: Unrecognized key/,
    );
  });

  it('refuses an unknown field in a published secret reference: it says where the secret is', () => {
    const catalog = parseCatalog({
      ...base,
      auth: { type: 'bearer', token: { env: 'ICEPACK_SECRET_PROD' } },
    });
    const envelope = createEnvelope(MessageType.CatalogDefined, 'prod', catalog);
    expect(() =>
      parseEnvelope({
        ...envelope,
        payload: { ...envelope.payload, auth: { type: 'bearer', token: { env: 'X', vault: 'y' } } },
      }),
    ).toThrow(/payload\.auth\.token/);
  });
});
