import { parseCatalog, type SecretRef } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { isLocalCatalog } from '@icepack/runtime';
import { catalogClientOptions } from './catalog-client-options.ts';

const secrets: Record<string, string> = { TOKEN: 't0k', SECRET: 's3cr3t' };
const resolve = (ref: SecretRef) => ('env' in ref ? secrets[ref.env]! : 'from-file');

describe('catalogClientOptions', () => {
  it('reads file: locations only for catalogs configured as local (issue 16)', () => {
    const remote = parseCatalog({ name: 'prod', type: 'rest', uri: 'https://c.example.com' });
    expect(catalogClientOptions(remote, resolve, 5_000).localFiles).toBe(false);
    expect(catalogClientOptions(remote, resolve, 5_000, ['dev']).localFiles).toBe(false);
    expect(catalogClientOptions(remote, resolve, 5_000, ['dev', 'prod']).localFiles).toBe(true);
    expect(isLocalCatalog('anything', ['*'])).toBe(true);
    expect(isLocalCatalog('prod', [])).toBe(false);
  });

  it('passes URI, warehouse and properties and resolves a bearer token reference', () => {
    const options = catalogClientOptions(
      parseCatalog({
        name: 'prod',
        type: 'rest',
        uri: 'https://c.example.com/api',
        warehouse: 'wh',
        auth: { type: 'bearer', token: { env: 'TOKEN' } },
        properties: { 'header.x': '1' },
      }),
      resolve,
      5_000,
    );
    expect(options).toMatchObject({
      name: 'prod',
      uri: 'https://c.example.com/api',
      warehouse: 'wh',
      properties: { 'header.x': '1' },
      auth: { type: 'bearer', token: 't0k' },
      timeoutMs: 5_000,
    });
  });

  it('builds the OAuth2 credential as client_id:client_secret', () => {
    const options = catalogClientOptions(
      parseCatalog({
        name: 'prod',
        type: 'rest',
        uri: 'https://c',
        auth: { type: 'oauth2', clientId: 'icepack', clientSecret: { env: 'SECRET' }, scope: 'x' },
      }),
      resolve,
      1,
    );
    expect(options.auth).toEqual({ type: 'oauth2', credential: 'icepack:s3cr3t', scope: 'x' });
  });
});
