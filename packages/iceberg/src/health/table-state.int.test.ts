import { randomBytes } from 'node:crypto';
import type { TableId, TableState } from '@icepack/types';
import {
  FixtureKey,
  generateFixtures,
  fixtureTruth,
  infraEnv,
  sparkSql,
  tableTruth,
  type GroundTruth,
  type TableTruth,
} from '@icepack/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestCatalog } from '../catalog/rest-catalog.ts';
import { ManifestCache } from '../manifest/manifest-cache.ts';
import { readSnapshotManifests } from '../manifest/read-manifests.ts';
import type { LoadedTable } from '../metadata/loaded-table.ts';
import { currentSnapshot } from '../metadata/snapshot-history.ts';
import { computeTableState } from './compute-table-state.ts';
import { SIZE_HISTOGRAM_BOUNDS } from './size-histogram.ts';

// Every figure of TableState against Spark's own view of the same tables (metadata tables
// and the Java API, through test/fixtures/truth.py), on the real REST catalog.

const catalog = new RestCatalog({ name: 'fixtures', uri: infraEnv().catalogUri });

async function load(id: TableId): Promise<LoadedTable> {
  const outcome = await catalog.loadTable(id);
  if (outcome.status !== 'loaded') throw new Error('expected a loaded table');
  return outcome.table;
}

function expectedHistogram(
  sizes: readonly number[],
): { upperBoundBytes: number | null; files: number; bytes: number }[] {
  const buckets = [...SIZE_HISTOGRAM_BOUNDS, null].map((upperBoundBytes) => ({
    upperBoundBytes,
    files: 0,
    bytes: 0,
  }));
  for (const size of sizes) {
    const bucket = buckets.find((b) => b.upperBoundBytes === null || size < b.upperBoundBytes)!;
    bucket.files++;
    bucket.bytes += size;
  }
  return buckets;
}

/** Snapshots on the current snapshot's lineage after its last `replace`. */
function sinceLastReplace(truth: TableTruth): number {
  const byId = new Map(truth.snapshots.map((s) => [s.snapshotId, s]));
  let n = 0;
  for (let id = truth.currentSnapshotId; id !== null;) {
    const s = byId.get(id);
    if (s === undefined || s.operation === 'replace') break;
    n++;
    id = s.parentId;
  }
  return n;
}

const partitionKey = (p: Record<string, unknown>): string =>
  JSON.stringify(
    Object.fromEntries(
      Object.entries(p).map(([k, v]) => [k, v === null ? null : String(v as string)]),
    ),
  );

function expectMatchesTruth(state: TableState, truth: TableTruth): void {
  const sizes = truth.dataFiles.sizes;
  const threshold = state.files.smallFileThresholdBytes;
  const dv = truth.deletionVectors;
  expect(state.metadataLocation).toBe(truth.metadataLocation);
  expect(state.formatVersion).toBe(truth.formatVersion);
  expect(state.tableUuid).toBe(truth.tableUuid);
  expect(state.currentSnapshotId).toBe(truth.currentSnapshotId);
  expect(state.lastSequenceNumber).toBe(truth.lastSequenceNumber);
  expect(state.properties).toEqual(truth.properties);
  expect(state.files).toEqual({
    dataFiles: truth.dataFiles.count,
    dataBytes: truth.dataFiles.bytes,
    records: truth.dataFiles.records,
    smallFiles: sizes.filter((s) => s < threshold).length,
    smallFileBytes: sizes.filter((s) => s < threshold).reduce((a, b) => a + b, 0),
    smallFileThresholdBytes: threshold,
    positionDeleteFiles: truth.positionDeleteFiles.count,
    equalityDeleteFiles: truth.equalityDeleteFiles.count,
    deletionVectors: dv.count,
    deleteFileBytes:
      truth.positionDeleteFiles.bytes + truth.equalityDeleteFiles.bytes + dv.puffinBytes,
    positionDeleteRecords: truth.positionDeleteFiles.records + dv.records,
    equalityDeleteRecords: truth.equalityDeleteFiles.records,
    // No fixture removes a data file its deletes name (no rewrite, no overwrite; a second DV
    // replaces the first): every delete applies. dangling-deletes.int.test.ts has the others.
    danglingDeletes: { positionDeleteFiles: 0, equalityDeleteFiles: 0, deletionVectors: 0 },
  });
  expect(state.sizeHistogram).toEqual(expectedHistogram(sizes));
  expect(state.snapshots.total).toBe(truth.snapshotCount);
  expect(state.snapshots.sinceLastRewrite).toBe(sinceLastReplace(truth));
  expect(state.refs.map((r) => ({ name: r.name, type: r.type, snapshotId: r.snapshotId }))).toEqual(
    truth.refs,
  );
  expect(state.partitionSpec.specId).toBe(truth.partitionSpec.specId);
  expect(state.partitionSpec.fields.map((f) => [f.name, f.transform])).toEqual(
    truth.partitionSpec.fields.map((f) => [f.name, f.transform]),
  );
  expect(state.sortOrder).toEqual(truth.sortOrder);
  if (truth.partitions.length <= 100) {
    const ours = state.partitions.map((p) => [partitionKey(p.partition), p.dataFiles]).sort();
    const spark = truth.partitions.map((p) => [partitionKey(p.partition), p.dataFiles]).sort();
    expect(ours).toEqual(spark.filter(([, n]) => n !== 0));
  }
  if (state.newData.sinceSnapshotId === null) {
    expect(state.newData).toMatchObject({
      files: truth.dataFiles.count,
      bytes: truth.dataFiles.bytes,
    });
  }
}

let truth: GroundTruth;

beforeAll(async () => {
  truth = await generateFixtures({ reuse: true });
});

describe('computeTableState against Spark ground truth', () => {
  const keys = [
    FixtureKey.partitionedSmallFiles,
    FixtureKey.unpartitionedSmallFiles,
    FixtureKey.morPositionDeletes,
    FixtureKey.v3DeletionVectors,
    FixtureKey.equalityDeletes,
    FixtureKey.manySnapshots,
    FixtureKey.sorted,
    FixtureKey.formatV1,
    FixtureKey.oddName,
  ];
  for (const key of keys) {
    it(`${key}: every figure equals Spark's`, async () => {
      const t = fixtureTruth(truth, key);
      const state = await computeTableState(await load(t.id));
      expectMatchesTruth(state, t);
    });
  }

  it('a catalog not configured as local: its file: locations are refused, nothing read (issue 16)', async () => {
    // The same real catalog, seen as a remote one (the scanner's default for every catalog
    // not in ICEPACK_LOCAL_CATALOGS): its metadata points at this machine's files.
    const remote = new RestCatalog({
      name: 'remote',
      uri: infraEnv().catalogUri,
      localFiles: false,
    });
    const t = fixtureTruth(truth, FixtureKey.unpartitionedSmallFiles);
    const outcome = await remote.loadTable(t.id);
    if (outcome.status !== 'loaded') throw new Error('expected a loaded table');
    expect(outcome.table.metadataLocation).toMatch(/^file:|^\//);
    await expect(computeTableState(outcome.table)).rejects.toThrow(
      /refused to read a local file for catalog remote: it is not configured as local/,
    );
  });

  it('finds every fixture table by walking the catalog', async () => {
    const found = new Set<string>();
    for await (const id of catalog.walkTables()) found.add(JSON.stringify([id.namespace, id.name]));
    for (const key of keys) {
      const { id } = fixtureTruth(truth, key);
      expect(found).toContain(JSON.stringify([id.namespace, id.name]));
    }
  });
});

describe('incremental health after further commits', () => {
  const namespace = `iceberg_int_${randomBytes(4).toString('hex')}`;
  const id: TableId = { catalog: 'fixtures', namespace: [namespace], name: 'orders' };
  const t = `fixtures.${namespace}.orders`;
  const rows = (from: number, n: number): string =>
    Array.from(
      { length: n },
      (_, i) => `(${from + i}, '${['de', 'fr', 'it'][(from + i) % 3]}', ${(from + i) * 1.5})`,
    ).join(', ');

  afterAll(async () => {
    await sparkSql(infraEnv(), 'fixtures', [
      `DROP TABLE IF EXISTS ${t} PURGE`,
      `DROP NAMESPACE IF EXISTS fixtures.${namespace}`,
    ]);
  });

  it('reads only the new manifests, and every figure still equals Spark', async () => {
    await sparkSql(infraEnv(), 'fixtures', [
      `CREATE NAMESPACE fixtures.${namespace}`,
      `CREATE TABLE ${t} (id BIGINT, country STRING, amount DOUBLE) USING iceberg PARTITIONED BY (country) ` +
        `TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')`,
      `INSERT INTO ${t} VALUES ${rows(0, 12)}`,
      `INSERT INTO ${t} VALUES ${rows(12, 12)}`,
      `DELETE FROM ${t} WHERE id = 3`,
    ]);
    const cache = new ManifestCache();
    const first = await load(id);
    const s1 = await computeTableState(first, { cache });
    expectMatchesTruth(s1, await tableTruth(id));
    const before = await readSnapshotManifests(
      first.io,
      currentSnapshot(first.metadata)!,
      new ManifestCache(),
    );

    await sparkSql(infraEnv(), 'fixtures', [
      `INSERT INTO ${t} VALUES ${rows(24, 6)}`,
      `CALL fixtures.system.rewrite_data_files(table => '${namespace}.orders', options => map('min-input-files','2'))`,
      `INSERT INTO ${t} VALUES ${rows(30, 3)}`,
    ]);
    const second = await load(id);
    const after = await readSnapshotManifests(
      second.io,
      currentSnapshot(second.metadata)!,
      new ManifestCache(),
    );
    const seen = new Set(before.map((m) => m.path));
    const fresh = after.filter((m) => !seen.has(m.path)).length;
    cache.resetStats();
    const s2 = await computeTableState(second, { cache, previous: s1 });
    expect(fresh).toBeGreaterThan(0);
    expect(fresh).toBeLessThan(after.length + 1);
    expect(cache.stats.manifestsRead).toBe(fresh);
    const t2 = await tableTruth(id);
    expectMatchesTruth(s2, t2);
    // After the rewrite, only the last insert is new data.
    const lastInsert = second.metadata.snapshotsById.get(second.metadata.currentSnapshotId!)!;
    expect(s2.newData.sinceSnapshotId).toBe(lastInsert.parentSnapshotId);
    expect(s2.newData.records).toBe(3);
    expect(s2.newData.files).toBe(Number(lastInsert.summary['added-data-files']));
    expect(s2.newData.bytes).toBe(Number(lastInsert.summary['added-files-size']));
    // Four Spark sessions (commit, truth, commit, truth) on a shared two-core machine.
  }, 900_000);
});
