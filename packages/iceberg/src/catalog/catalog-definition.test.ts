import { parseCatalog, type SecretRef } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { restCatalogOptions } from './catalog-definition.ts';

const secrets: Record<string, string> = { TOKEN: 't0k', SECRET: 's3cr3t' };
const resolve = (ref: SecretRef) => ('env' in ref ? secrets[ref.env]! : 'from-file');

const remote = { timeoutMs: 5_000, localFiles: false, answerPropertyProblem: () => undefined };

describe('restCatalogOptions', () => {
  it('reads file: locations only when told the catalog is local (issue 16)', () => {
    const catalog = parseCatalog({ name: 'prod', type: 'rest', uri: 'https://c.example.com' });
    expect(restCatalogOptions(catalog, resolve, remote).localFiles).toBe(false);
    expect(restCatalogOptions(catalog, resolve, { ...remote, localFiles: true }).localFiles).toBe(
      true,
    );
  });

  it('passes URI, warehouse and properties and resolves a bearer token reference', () => {
    const options = restCatalogOptions(
      parseCatalog({
        name: 'prod',
        type: 'rest',
        uri: 'https://c.example.com/api',
        warehouse: 'wh',
        auth: { type: 'bearer', token: { env: 'TOKEN' } },
        properties: { 'header.x': '1' },
      }),
      resolve,
      { ...remote, maxResponseBytes: 1024 },
    );
    expect(options).toMatchObject({
      name: 'prod',
      uri: 'https://c.example.com/api',
      warehouse: 'wh',
      properties: { 'header.x': '1' },
      auth: { type: 'bearer', token: 't0k' },
      timeoutMs: 5_000,
      maxResponseBytes: 1024,
    });
  });

  it('builds the OAuth2 credential as client_id:client_secret', () => {
    const options = restCatalogOptions(
      parseCatalog({
        name: 'prod',
        type: 'rest',
        uri: 'https://c',
        auth: { type: 'oauth2', clientId: 'icepack', clientSecret: { env: 'SECRET' }, scope: 'x' },
      }),
      resolve,
      remote,
    );
    expect(options.auth).toEqual({ type: 'oauth2', credential: 'icepack:s3cr3t', scope: 'x' });
  });
});
