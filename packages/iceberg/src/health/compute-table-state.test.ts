import { readFile, truncate, unlink, writeFile } from 'node:fs/promises';
import { tempDir } from '@icepack/test';
import { describe, expect, it } from 'vitest';
import { IcebergError } from '../errors/iceberg-error.ts';
import { LocalFileIO } from '../io/local-file-io.ts';
import { ManifestCache } from '../manifest/manifest-cache.ts';
import { loadTableFromMetadataFile } from '../metadata/loaded-table.ts';
import { TestTableWriter } from '../testing/test-table-writer.ts';
import { computeTableState } from './compute-table-state.ts';

const id = { catalog: 'lake', namespace: ['sales', 'eu'], name: 'orders' };
const io = new LocalFileIO();
const partitionFields = [
  { name: 'region', type: 'string', sourceId: 3 },
  { name: 'day', type: 'int', sourceId: 2 },
];
const DAY_2024_01_02 = 19724;

function newTable(): TestTableWriter {
  return new TestTableWriter(tempDir('icepack-health-'), {
    formatVersion: 3,
    partitionFields,
    properties: { 'icepack.min-file-size-bytes': '1000' },
    sortSourceIds: [1],
  });
}

const data = (
  path: string,
  region: string,
  sizeBytes: number,
  recordCount: number,
  status?: 0 | 1 | 2,
) => ({
  path,
  sizeBytes,
  recordCount,
  partition: { region, day: DAY_2024_01_02 },
  ...(status === undefined
    ? {}
    : {
        status,
        snapshotId: TestTableWriter.snapshotIdFor(1),
        sequenceNumber: '1',
        fileSequenceNumber: '1',
      }),
});

/** Three commits: two appends and a merge-on-read delete (position, equality, two DVs in one puffin). */
async function writeHistory(table: TestTableWriter): Promise<string> {
  await table.commit({
    operation: 'append',
    summary: { 'added-data-files': '4', 'added-files-size': '5300', 'added-records': '40' },
    newManifests: [
      {
        entries: [
          data('a1', 'eu', 100, 10),
          data('a2', 'eu', 200, 10),
          data('a3', 'us', 300, 10),
          data('a4', 'us', 4700, 10),
        ],
      },
    ],
  });
  await table.commit({
    operation: 'append',
    summary: { 'added-data-files': '2', 'added-files-size': '2500', 'added-records': '20' },
    newManifests: [
      {
        entries: [
          data('b1', 'eu', 500, 10),
          data('b2', 'eu', 2000, 10),
          data('gone', 'eu', 7, 1, 2),
        ],
      },
    ],
  });
  return table.commit({
    operation: 'delete',
    summary: { 'added-delete-files': '4', 'added-dvs': '2' },
    newManifests: [
      {
        content: 'deletes',
        entries: [
          {
            content: 1,
            path: 'pos.parquet',
            sizeBytes: 50,
            recordCount: 3,
            partition: { region: 'eu', day: DAY_2024_01_02 },
          },
          {
            content: 2,
            path: 'eq.parquet',
            sizeBytes: 60,
            recordCount: 2,
            partition: { region: 'us', day: DAY_2024_01_02 },
          },
          {
            content: 1,
            format: 'PUFFIN',
            path: 'dv.puffin',
            sizeBytes: 500,
            recordCount: 4,
            referencedDataFile: 'a1',
            contentOffset: 4,
            contentSizeInBytes: 40,
            partition: { region: 'eu', day: DAY_2024_01_02 },
          },
          {
            content: 1,
            format: 'PUFFIN',
            path: 'dv.puffin',
            sizeBytes: 500,
            recordCount: 1,
            referencedDataFile: 'b1',
            contentOffset: 44,
            contentSizeInBytes: 40,
            partition: { region: 'eu', day: DAY_2024_01_02 },
          },
        ],
      },
    ],
  });
}

describe('computeTableState', () => {
  it('counts the delete files that apply to no live data file apart (dangling deletes)', async () => {
    const dir = tempDir('icepack-dangling-');
    const table = new TestTableWriter(dir, {
      formatVersion: 2,
      partitionFields: [{ name: 'region', type: 'string', sourceId: 3 }],
    });
    const file = (path: string, region: string, extra: object = {}) => ({
      path,
      sizeBytes: 100,
      recordCount: 10,
      partition: { region },
      ...extra,
    });
    // seq 1: data in eu and us.
    await table.commit({
      operation: 'append',
      newManifests: [{ entries: [file('eu-1', 'eu'), file('eu-2', 'eu'), file('us-1', 'us')] }],
    });
    // seq 2: merge-on-read deletes, as Spark writes them (file-scoped position deletes name
    // their data file only through equal file_path bounds).
    const deleted = await table.commit({
      operation: 'delete',
      newManifests: [
        {
          content: 'deletes',
          entries: [
            file('pos-eu-1', 'eu', {
              content: 1,
              filePathBounds: { lower: 'eu-1', upper: 'eu-1' },
            }),
            file('pos-eu-any', 'eu', {
              content: 1,
              filePathBounds: { lower: 'eu-1', upper: 'eu-2' },
            }),
            file('pos-us-1', 'us', { content: 1, referencedDataFile: 'us-1' }),
            file('eq-us', 'us', { content: 2 }),
            file('pos-asia', 'asia', { content: 1 }),
          ],
        },
      ],
    });
    const before = await computeTableState(await loadTableFromMetadataFile(id, deleted, io));
    expect(before.files.positionDeleteFiles).toBe(4);
    expect(before.files.equalityDeleteFiles).toBe(1);
    // Only the delete in a partition without data applies to nothing yet.
    expect(before.files.danglingDeletes).toEqual({
      positionDeleteFiles: 1,
      equalityDeleteFiles: 0,
      deletionVectors: 0,
    });

    // seq 3: a rewrite of eu-1 and us-1 that keeps the starting sequence number (2), as
    // rewrite_data_files does: the new files are not older than the seq-2 deletes.
    const location = await table.commit({
      operation: 'replace',
      newManifests: [
        {
          entries: [
            file('eu-2', 'eu', {
              status: 0,
              snapshotId: TestTableWriter.snapshotIdFor(1),
              sequenceNumber: '1',
              fileSequenceNumber: '1',
            }),
            file('eu-1', 'eu', {
              status: 2,
              snapshotId: TestTableWriter.snapshotIdFor(1),
              sequenceNumber: '1',
              fileSequenceNumber: '1',
            }),
            file('us-1', 'us', {
              status: 2,
              snapshotId: TestTableWriter.snapshotIdFor(1),
              sequenceNumber: '1',
              fileSequenceNumber: '1',
            }),
            file('eu-new', 'eu', { sequenceNumber: '2' }),
            file('us-new', 'us', { sequenceNumber: '2' }),
          ],
        },
      ],
      keep: (m) => m.content === 1,
    });
    const after = await computeTableState(await loadTableFromMetadataFile(id, location, io));
    // Still tracked, so still counted as delete files …
    expect(after.files.positionDeleteFiles).toBe(4);
    expect(after.files.equalityDeleteFiles).toBe(1);
    // … but pos-eu-1 and pos-us-1 name removed files, eq-us has no strictly older data left
    // in us, pos-asia none at all; pos-eu-any may still hit eu-2 (seq 1 ≤ 2).
    expect(after.files.danglingDeletes).toEqual({
      positionDeleteFiles: 3,
      equalityDeleteFiles: 1,
      deletionVectors: 0,
    });
  });

  it('matches non-ASCII paths and compares sequence numbers above 2^53 exactly', async () => {
    const dir = tempDir('icepack-exact-');
    const table = new TestTableWriter(dir, {
      formatVersion: 3,
      partitionFields: [{ name: 'region', type: 'string', sourceId: 3 }],
    });
    const old = (seq: string) => ({
      status: 0 as const,
      snapshotId: TestTableWriter.snapshotIdFor(1),
      sequenceNumber: seq,
      fileSequenceNumber: seq,
    });
    const file = (path: string, extra: object = {}) => ({
      path,
      sizeBytes: 100,
      recordCount: 10,
      partition: { region: 'ré' },
      ...extra,
    });
    await table.commit({
      operation: 'append',
      newManifests: [{ entries: [file('données/ü-1.parquet', old('9007199254740995'))] }],
    });
    const location = await table.commit({
      operation: 'delete',
      newManifests: [
        {
          content: 'deletes',
          entries: [
            file('dv.puffin', {
              content: 1,
              format: 'PUFFIN',
              referencedDataFile: 'données/ü-1.parquet',
            }),
            file('dv.puffin', {
              content: 1,
              format: 'PUFFIN',
              referencedDataFile: 'données/ü-2.parquet',
            }),
            // Applies: the data (2^53 + 3) is strictly older than 2^53 + 4 (as doubles both are 2^53 + 4).
            file('eq-newer', { content: 2, ...old('9007199254740996') }),
            // Dangling: the same sequence number.
            file('eq-same', { content: 2, ...old('9007199254740995') }),
          ],
        },
      ],
    });
    const state = await computeTableState(await loadTableFromMetadataFile(id, location, io));
    expect(state.files.deletionVectors).toBe(2);
    expect(state.files.danglingDeletes).toEqual({
      positionDeleteFiles: 0,
      equalityDeleteFiles: 1,
      deletionVectors: 1,
    });
    expect(state.partitions).toEqual([
      expect.objectContaining({ partition: { region: 'ré' }, dataFiles: 1, deleteFiles: 4 }),
    ]);
  });

  it('measures every factor of a partitioned merge-on-read table', async () => {
    const table = newTable();
    const location = await writeHistory(table);
    const loaded = await loadTableFromMetadataFile(id, location, io);
    const state = await computeTableState(loaded, { now: () => new Date('2026-01-01T00:00:00Z') });

    expect(state.files).toEqual({
      dataFiles: 6,
      dataBytes: 7800,
      records: 60,
      smallFiles: 4, // below icepack.min-file-size-bytes = 1000
      smallFileBytes: 1100,
      smallFileThresholdBytes: 1000,
      positionDeleteFiles: 1,
      equalityDeleteFiles: 1,
      deletionVectors: 2,
      deleteFileBytes: 50 + 60 + 500, // the shared puffin file once
      positionDeleteRecords: 3 + 4 + 1,
      equalityDeleteRecords: 2,
      // Every delete applies: older data in its partition, DVs naming live files.
      danglingDeletes: { positionDeleteFiles: 0, equalityDeleteFiles: 0, deletionVectors: 0 },
    });
    expect(state.currentSnapshotId).toBe(TestTableWriter.snapshotIdFor(3));
    expect(state.lastSequenceNumber).toBe('3');
    expect(state.snapshots).toMatchObject({ total: 3, sinceLastRewrite: 3 });
    // Only main: every snapshot is on its lineage, the oldest is the first commit.
    expect(state.snapshots.expiry).toEqual({
      mainOnly: 3,
      oldestMainOnlyAt: new Date(1_790_000_000_000 + 60_000).toISOString(),
      unreferenced: 0,
    });
    expect(state.newData).toEqual({
      sinceSnapshotId: null,
      files: 6,
      records: 60,
      bytes: 7800,
      share: 1,
    });
    expect(state.sortOrder).toEqual({
      orderId: 1,
      fields: [
        {
          sourceId: 1,
          column: 'id',
          transform: 'identity',
          direction: 'asc',
          nullOrder: 'nulls-first',
        },
      ],
    });
    expect(state.partitionSpec.fields.map((f) => f.name)).toEqual(['region', 'day']);
    expect(state.refs).toEqual([
      { name: 'main', type: 'branch', snapshotId: TestTableWriter.snapshotIdFor(3) },
    ]);
    // Worst first; the day renders as a date, as Spark shows it. The last change is the
    // newest live file's sequence number and the commit time of its snapshot.
    const third = loaded.metadata.snapshots.find((s) => s.sequenceNumber === '3')!;
    const lastChangedAt = new Date(third.timestampMs).toISOString();
    expect(state.partitions).toEqual([
      {
        specId: 0,
        partition: { region: 'eu', day: '2024-01-02' },
        dataFiles: 4,
        smallFiles: 3,
        deleteFiles: 3,
        bytes: 2800,
        smallFileBytes: 800,
        deleteFileBytes: 50, // the position-delete file; the DVs' puffin file is shared
        lastSequenceNumber: '3',
        lastChangedAt,
      },
      {
        specId: 0,
        partition: { region: 'us', day: '2024-01-02' },
        dataFiles: 2,
        smallFiles: 1,
        deleteFiles: 1,
        bytes: 5000,
        smallFileBytes: 300,
        deleteFileBytes: 60,
        lastSequenceNumber: '3',
        lastChangedAt,
      },
    ]);
    expect(state.partitionTotals).toEqual({ partitions: 2, needingWork: 2, listed: 2 });
    // Source column names, so the planner can write a partition filter.
    expect(state.partitionSpec.fields.map((f) => f.column)).toEqual(['region', 'day']);
    expect(state.otherPartitionSpecs).toBeUndefined();
    const histogramFiles = state.sizeHistogram.reduce((n, b) => n + b.files, 0);
    expect(histogramFiles).toBe(6);
    expect(state.sizeHistogram[0]).toEqual({ upperBoundBytes: 65536, files: 6, bytes: 7800 });
    expect(state.sizeHistogram.at(-1)!.upperBoundBytes).toBeNull();
  });

  it.each([
    // No snapshot retention of its own: the expiry's own retain_last/older_than apply to the
    // branch too (Iceberg's RemoveSnapshots), so it surely holds only its head.
    { ref: '"type":"branch"', mainOnly: 2 },
    // A retention of its own holds the branch's lineage by that retention.
    { ref: '"type":"branch","min-snapshots-to-keep":5', mainOnly: 1 },
    { ref: '"type":"tag"', mainOnly: 2 },
  ])('counts what an expiry could remove beside a ref {$ref} on the second snapshot', async (c) => {
    const location = await writeHistory(newTable());
    // The same table with one more ref (snapshot ids above 2^53: edited as text).
    const audit = `"audit":{"snapshot-id":${TestTableWriter.snapshotIdFor(2)},${c.ref}},`;
    const text = (await readFile(new URL(location), 'utf8')).replace(
      /"refs": *\{/,
      `"refs":{${audit}`,
    );
    expect(text).toContain('"audit"');
    const withRef = location.replace(/[.]metadata[.]json$/, '-ref.metadata.json');
    await writeFile(new URL(withRef), text);
    const state = await computeTableState(await loadTableFromMetadataFile(id, withRef, io));
    expect(state.snapshots.expiry?.mainOnly).toBe(c.mainOnly);
    expect(state.snapshots.expiry?.unreferenced).toBe(0);
  });

  it('reads only manifests not seen before, and nothing when the metadata is unchanged', async () => {
    const table = newTable();
    const cache = new ManifestCache();
    const first = await computeTableState(
      await loadTableFromMetadataFile(id, await writeHistory(table), io),
      { cache },
    );
    expect(cache.stats.manifestsRead).toBe(3);

    // A compaction replaces both data manifests, then one more append.
    await table.commit({
      operation: 'replace',
      summary: { 'added-data-files': '1', 'added-files-size': '7800', 'added-records': '60' },
      keep: (m) => m.content === 1,
      newManifests: [{ entries: [data('c1', 'eu', 7800, 60)] }],
    });
    const location = await table.commit({
      operation: 'append',
      summary: { 'added-data-files': '1', 'added-files-size': '1950', 'added-records': '5' },
      newManifests: [{ entries: [data('d1', 'us', 1950, 5)] }],
    });
    cache.resetStats();
    const loaded = await loadTableFromMetadataFile(id, location, io);
    const second = await computeTableState(loaded, { cache, previous: first });
    expect(cache.stats.manifestsRead).toBe(2); // the two new manifests only
    expect(second.files).toMatchObject({
      dataFiles: 2,
      dataBytes: 9750,
      records: 65,
      smallFiles: 0,
      deletionVectors: 2,
    });
    expect(second.snapshots).toMatchObject({ total: 5, sinceLastRewrite: 1 });
    expect(second.newData).toEqual({
      sinceSnapshotId: TestTableWriter.snapshotIdFor(4),
      sinceSequenceNumber: '4',
      files: 1,
      records: 5,
      bytes: 1950,
      share: 1950 / 9750,
    });

    cache.resetStats();
    const third = await computeTableState(loaded, { cache, previous: second });
    expect(cache.stats).toMatchObject({ manifestsRead: 0, manifestListsRead: 0 });
    expect(third.files).toEqual(second.files);
  });

  it('a missing manifest is a not-found error, a truncated one a corrupt-file error, each naming the file', async () => {
    const table = newTable();
    const location = await writeHistory(table);
    const [first, second] = table.manifestPaths;
    await unlink(first!);
    const missing = await computeTableState(
      await loadTableFromMetadataFile(id, location, io),
    ).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(IcebergError);
    expect((missing as IcebergError).kind).toBe('not-found');
    expect((missing as IcebergError).message).toContain(first);

    const other = newTable();
    const location2 = await writeHistory(other);
    await truncate(other.manifestPaths[1]!, 200);
    const corrupt = await computeTableState(
      await loadTableFromMetadataFile(id, location2, io),
    ).catch((e: unknown) => e);
    expect((corrupt as IcebergError).kind).toBe('corrupt-file');
    expect((corrupt as IcebergError).message).toContain(other.manifestPaths[1]);
    expect(second).toBeDefined();
  });

  it('an empty table has zero figures', async () => {
    const dir = tempDir('icepack-empty-');
    const writer = new TestTableWriter(dir, { formatVersion: 2 });
    const location = await writer.commit({
      operation: 'append',
      summary: { 'added-data-files': '0' },
      newManifests: [],
    });
    const state = await computeTableState(await loadTableFromMetadataFile(id, location, io));
    expect(state.files.dataFiles).toBe(0);
    expect(state.newData.share).toBe(0);
    // 75 % of Iceberg's default 512 MiB target.
    expect(state.files.smallFileThresholdBytes).toBe(402653184);
  });
});
