import { randomBytes } from 'node:crypto';
import { defaultCatalogAccessPolicy, secretResolver } from '@icepack/runtime';
import { startAnswerPropertiesCatalog, type AnswerProperties } from '@icepack/test';
import { catalogSchema, type TableId } from '@icepack/types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createNamespace, createTable, dropNamespaceTree } from '../testing/rest-tables.ts';
import { CatalogClients } from './catalog-clients.ts';

// A catalog's answers cannot point the scanner's storage reads where a registered property
// could not go (docs/security.md): the real REST catalog, behind a proxy that adds an
// `s3.endpoint` on the cloud metadata address to its answers as a hostile operator would.

const infra = inject('infra');
const namespace = `answers_${randomBytes(4).toString('hex')}`;
const table: TableId = { catalog: 'hostile', namespace: [namespace], name: 't' };
const metadataEndpoint = 'http://169.254.169.254/latest/';

const clients = (allowLinkLocal: boolean): CatalogClients => {
  const policy = { ...defaultCatalogAccessPolicy, allowLinkLocal };
  return new CatalogClients(secretResolver({}, policy), 5_000, policy, 2 ** 20, ['*']);
};

beforeAll(async () => {
  await createNamespace(infra.catalogUri, table.namespace);
  await createTable(infra.catalogUri, table.namespace, table.name);
});

afterAll(() => dropNamespaceTree(infra.catalogUri, table.namespace));

describe("the scanner's catalog clients", () => {
  it.each<[string, Omit<AnswerProperties, 'target'>, string]>([
    ['a table load', { table: { 's3.endpoint': metadataEndpoint } }, 'table config'],
    ['the config answer', { config: { 's3.endpoint': metadataEndpoint } }, 'config overrides'],
  ])(
    'refuse a table whose storage endpoint %s puts on the metadata address; load it when link-local addresses are allowed',
    async (_, answers, answer) => {
      const hostile = await startAnswerPropertiesCatalog({ target: infra.catalogUri, ...answers });
      try {
        const catalog = catalogSchema.parse({
          name: table.catalog,
          type: 'rest',
          uri: hostile.uri,
        });
        const refused = clients(false).get(catalog).loadTable(table);
        await expect(refused).rejects.toThrow(
          `the catalog's ${answer} set s3.endpoint to an address that may not be called: 169.254.169.254 is a link-local address`,
        );
        await expect(refused).rejects.toMatchObject({ kind: 'bad-response', retryable: false });
        // ICEPACK_CATALOG_ALLOW_LINK_LOCAL=on: the same answer is used.
        const loaded = await clients(true).get(catalog).loadTable(table);
        expect(loaded.status === 'loaded' && loaded.table.config['s3.endpoint']).toBe(
          metadataEndpoint,
        );
      } finally {
        await hostile.close();
      }
    },
  );
});
