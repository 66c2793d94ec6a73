import { defaultCatalogAccessPolicy } from '@icepack/runtime';
import { startAnswerPropertiesCatalog } from '@icepack/test';
import { catalogSchema } from '@icepack/types';
import { describe, expect, inject, it } from 'vitest';
import { figuresCatalog } from './create-catalog-worker.ts';
import { CatalogTableHealth } from './table-health.ts';

// The dispatcher's before/after figures read takes the storage properties of the catalog's
// answers only where a registered property could go (docs/security.md): the real REST
// catalog, behind a proxy whose config answer sets `s3.endpoint` on the metadata address.

const infra = inject('infra');

describe("the dispatcher's figures read", () => {
  it('refuses a catalog whose config answer puts the storage endpoint on the metadata address', async () => {
    const hostile = await startAnswerPropertiesCatalog({
      target: infra.catalogUri,
      config: { 's3.endpoint': 'http://[fd00:ec2::254]/' },
    });
    try {
      const catalog = catalogSchema.parse({ name: 'hostile', type: 'rest', uri: hostile.uri });
      const health = new CatalogTableHealth(() =>
        figuresCatalog(catalog, { localCatalogs: ['*'], policy: defaultCatalogAccessPolicy }),
      );
      await expect(
        health.read({ catalog: 'hostile', namespace: ['any'], name: 'table' }),
      ).rejects.toThrow(
        "the catalog's config overrides set s3.endpoint to an address that may not be called: fd00:ec2::254 is a cloud metadata address",
      );
    } finally {
      await hostile.close();
    }
  });
});
