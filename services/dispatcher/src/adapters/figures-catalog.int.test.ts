import { FixtureKey, fixtureTruth, generateFixtures, type GroundTruth } from '@icepack/test';
import { catalogSchema } from '@icepack/types';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { figuresCatalog } from './create-catalog-worker.ts';
import { CatalogTableHealth } from './table-health.ts';

// The dispatcher reads a table's before/after figures itself; like the scanner, it reads
// `file:` locations only for catalogs configured as local (ICEPACK_LOCAL_CATALOGS, issue 16).

const infra = inject('infra');
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

    const remote = new CatalogTableHealth(() => figuresCatalog(catalog, []));
    await expect(remote.read(t.id)).rejects.toThrow(
      /refused to read a local file for catalog fixtures: it is not configured as local/,
    );

    for (const localCatalogs of [['*'], [catalog.name]]) {
      const local = new CatalogTableHealth(() => figuresCatalog(catalog, localCatalogs));
      expect(await local.read(t.id)).toMatchObject({
        dataFiles: t.dataFiles.count,
        snapshots: t.snapshotCount,
      });
    }
  });
});
