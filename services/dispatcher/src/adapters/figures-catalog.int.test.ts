import { randomBytes } from 'node:crypto';
import {
  FixtureKey,
  fixtureTruth,
  generateFixtures,
  startOAuth2CatalogProxy,
  type GroundTruth,
} from '@icepack/test';
import { defaultCatalogAccessPolicy, secretResolver } from '@icepack/runtime';
import { catalogSchema } from '@icepack/types';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { figuresCatalog } from './create-catalog-worker.ts';
import { CatalogTableHealth } from './table-health.ts';

// The dispatcher reads a table's before/after figures itself; like the scanner, it reads
// `file:` locations only for catalogs configured as local (ICEPACK_LOCAL_CATALOGS, issue 16),
// and reaches the catalog with its auth (issue 20).

const infra = inject('infra');
const policy = defaultCatalogAccessPolicy;
let truth: GroundTruth;

beforeAll(async () => {
  // The shared fixture tables: built once per run, reused by every file that reads them.
  truth = await generateFixtures({ reuse: true });
}, 900_000);

describe("the dispatcher's figures read", () => {
  it('refuses the file: locations of a catalog not configured as local, and reads them when it is', async () => {
    const t = fixtureTruth(truth, FixtureKey.unpartitionedSmallFiles);
    const catalog = catalogSchema.parse({
      name: t.id.catalog,
      type: 'rest',
      uri: infra.catalogUri,
    });

    const remote = new CatalogTableHealth(() =>
      figuresCatalog(catalog, { localCatalogs: [], policy }),
    );
    await expect(remote.read(t.id)).rejects.toThrow(
      /refused to read a local file for catalog fixtures: it is not configured as local/,
    );

    for (const localCatalogs of [['*'], [catalog.name]]) {
      const local = new CatalogTableHealth(() =>
        figuresCatalog(catalog, { localCatalogs, policy }),
      );
      expect(await local.read(t.id)).toMatchObject({
        dataFiles: t.dataFiles.count,
        snapshots: t.snapshotCount,
      });
    }
  });

  it("reaches a catalog that requires an OAuth2 token with the catalog's auth, never without", async () => {
    const t = fixtureTruth(truth, FixtureKey.unpartitionedSmallFiles);
    const clientSecret = randomBytes(16).toString('hex');
    const variable = `ICEPACK_SECRET_FIGURES_${randomBytes(4).toString('hex').toUpperCase()}`;
    const proxy = await startOAuth2CatalogProxy({
      target: infra.catalogUri,
      clientId: 'icepack-dispatcher',
      clientSecret,
    });
    try {
      const catalog = catalogSchema.parse({
        name: t.id.catalog,
        type: 'rest',
        uri: proxy.uri,
        auth: { type: 'oauth2', clientId: 'icepack-dispatcher', clientSecret: { env: variable } },
      });
      const rest = figuresCatalog(catalog, {
        localCatalogs: [catalog.name],
        policy,
        // The dispatcher's environment, as the chart injects catalog credentials into it.
        resolveSecret: secretResolver({ [variable]: clientSecret }, policy),
      });
      const health = new CatalogTableHealth(() => rest);
      expect(await health.read(t.id)).toMatchObject({
        dataFiles: t.dataFiles.count,
        snapshots: t.snapshotCount,
      });
      expect(await health.read(t.id)).toMatchObject({ dataFiles: t.dataFiles.count });
      // One token for both reads (reused, not fetched per read); no request went without it.
      expect(proxy.seen.tokens).toBe(1);
      expect(proxy.seen.refused).toBe(0);
      expect(proxy.seen.authorized).toBeGreaterThan(0);
      rest.close();

      // A secret that is not there fails naming the field (the worker logs "table figures
      // not read" and goes on), and nothing is sent.
      expect(() =>
        figuresCatalog(catalog, {
          localCatalogs: [catalog.name],
          policy,
          resolveSecret: secretResolver({}, policy),
        }),
      ).toThrow(`auth.clientSecret: environment variable ${variable} is not set`);
      expect(proxy.seen.tokens).toBe(1);
    } finally {
      await proxy.close();
    }
  });
});
