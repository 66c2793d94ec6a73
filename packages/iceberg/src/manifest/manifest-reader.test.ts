import { describe, expect, it } from 'vitest';
import { icebergErrorOf } from '../testing/iceberg-error-of.ts';
import { encodeManifest, encodeManifestList } from '../testing/manifest-writer.ts';
import type { ManifestEntry, ManifestFile } from './manifest-file.ts';
import { decodeManifestList } from './manifest-list-reader.ts';
import { decodeManifest } from './manifest-reader.ts';

const BIG_SNAPSHOT = '8744736658442914487'; // > 2^53: must stay exact
const OTHER_SNAPSHOT = '9007199254740993'; // 2^53 + 1

function manifestFile(overrides: Partial<ManifestFile> = {}): ManifestFile {
  return {
    path: 'file:/t/metadata/m0.avro',
    length: 1,
    partitionSpecId: 0,
    content: 0,
    sequenceNumber: '12',
    minSequenceNumber: '12',
    addedSnapshotId: BIG_SNAPSHOT,
    addedFilesCount: null,
    existingFilesCount: null,
    deletedFilesCount: null,
    addedRowsCount: null,
    existingRowsCount: null,
    deletedRowsCount: null,
    ...overrides,
  };
}

function decodeAll(bytes: Uint8Array, manifest: ManifestFile): ManifestEntry[] {
  const out: ManifestEntry[] = [];
  decodeManifest(bytes, manifest, (e) => out.push(e));
  return out;
}

describe('decodeManifestList', () => {
  it('reads v2 entries with exact 64-bit snapshot ids and sequence numbers', () => {
    const bytes = encodeManifestList(2, [
      {
        path: 's3://b/m1.avro',
        length: 4242,
        sequenceNumber: '9007199254740995',
        addedSnapshotId: BIG_SNAPSHOT,
        addedFiles: 3,
        addedRows: 30,
      },
      {
        path: 's3://b/m2.avro',
        length: 17,
        content: 1,
        specId: 2,
        sequenceNumber: '5',
        minSequenceNumber: '3',
        addedSnapshotId: OTHER_SNAPSHOT,
        deletedFiles: 1,
      },
    ]);
    const list = decodeManifestList(bytes, 'list.avro');
    expect(list).toEqual([
      expect.objectContaining({
        path: 's3://b/m1.avro',
        length: 4242,
        content: 0,
        sequenceNumber: '9007199254740995',
        addedSnapshotId: BIG_SNAPSHOT,
        addedFilesCount: 3,
        addedRowsCount: 30,
      }),
      expect.objectContaining({
        path: 's3://b/m2.avro',
        content: 1,
        partitionSpecId: 2,
        sequenceNumber: '5',
        minSequenceNumber: '3',
        addedSnapshotId: OTHER_SNAPSHOT,
        deletedFilesCount: 1,
      }),
    ]);
  });

  it('reads v1 lists (old count names, no sequence numbers)', () => {
    const bytes = encodeManifestList(1, [
      { path: '/t/m.avro', length: 9, sequenceNumber: '0', addedSnapshotId: '42', addedFiles: 2 },
    ]);
    expect(decodeManifestList(bytes, 'list.avro')).toEqual([
      expect.objectContaining({
        content: 0,
        sequenceNumber: '0',
        addedSnapshotId: '42',
        addedFilesCount: 2,
      }),
    ]);
  });
});

describe('decodeManifest', () => {
  it('inherits snapshot id and sequence numbers for ADDED entries and keeps explicit ones', () => {
    const bytes = encodeManifest({
      formatVersion: 2,
      partitionFields: [{ name: 'region', type: 'string' }],
      entries: [
        { path: 'a.parquet', recordCount: 10, sizeBytes: 1000, partition: { region: 'eu' } },
        {
          status: 0,
          snapshotId: OTHER_SNAPSHOT,
          sequenceNumber: '3',
          fileSequenceNumber: '4',
          path: 'b.parquet',
          recordCount: 5,
          sizeBytes: 500,
          partition: { region: null },
        },
        {
          status: 2,
          snapshotId: BIG_SNAPSHOT,
          sequenceNumber: '2',
          fileSequenceNumber: '2',
          path: 'c.parquet',
          recordCount: 1,
          sizeBytes: 1,
        },
      ],
    });
    const entries = decodeAll(bytes, manifestFile());
    expect(
      entries.map((e) => [
        e.status,
        e.snapshotId,
        e.sequenceNumber,
        e.fileSequenceNumber,
        e.filePath,
      ]),
    ).toEqual([
      [1, BIG_SNAPSHOT, '12', '12', 'a.parquet'],
      [0, OTHER_SNAPSHOT, '3', '4', 'b.parquet'],
      [2, BIG_SNAPSHOT, '2', '2', 'c.parquet'],
    ]);
    expect(entries[0]).toMatchObject({
      content: 0,
      fileFormat: 'PARQUET',
      recordCount: 10,
      fileSizeInBytes: 1000,
      partition: { region: 'eu' },
    });
    expect(entries[1]!.partition).toEqual({ region: null });
    // Column statistics are not materialised.
    expect(Object.keys(entries[0]!)).not.toContain('columnSizes');
  });

  it('rejects a null sequence number on an EXISTING entry (the spec allows inheritance only for ADDED)', () => {
    const bytes = encodeManifest({
      formatVersion: 2,
      entries: [{ status: 0, snapshotId: '1', path: 'x', recordCount: 1, sizeBytes: 1 }],
    });
    const error = icebergErrorOf(() => decodeAll(bytes, manifestFile()));
    expect(error.kind).toBe('corrupt-file');
    expect(error.message).toContain('file:/t/metadata/m0.avro');
  });

  it('reads v1 manifests: explicit snapshot ids, no sequence numbers, everything is data', () => {
    const bytes = encodeManifest({
      formatVersion: 1,
      entries: [{ snapshotId: BIG_SNAPSHOT, path: 'v1.parquet', recordCount: 7, sizeBytes: 70 }],
    });
    const [entry] = decodeAll(bytes, manifestFile({ sequenceNumber: '0', addedSnapshotId: '1' }));
    expect(entry).toMatchObject({
      snapshotId: BIG_SNAPSHOT,
      sequenceNumber: '0',
      content: 0,
      recordCount: 7,
      fileSizeInBytes: 70,
    });
  });

  it('reads v3 deletion vectors (puffin, referenced data file, blob offset and size)', () => {
    const bytes = encodeManifest({
      formatVersion: 3,
      content: 'deletes',
      entries: [
        {
          content: 1,
          format: 'PUFFIN',
          path: 'dv.puffin',
          recordCount: 3,
          sizeBytes: 900,
          referencedDataFile: 'a.parquet',
          contentOffset: 4,
          contentSizeInBytes: 44,
        },
        { content: 2, path: 'eq.parquet', recordCount: 2, sizeBytes: 300 },
      ],
    });
    const entries = decodeAll(bytes, manifestFile({ content: 1 }));
    expect(entries[0]).toMatchObject({
      content: 1,
      fileFormat: 'PUFFIN',
      referencedDataFile: 'a.parquet',
      contentOffset: 4,
      contentSizeInBytes: 44,
    });
    expect(entries[1]).toMatchObject({ content: 2, contentOffset: null, referencedDataFile: null });
  });

  it('decodes uncompressed and multi-block files alike', () => {
    const entries = Array.from({ length: 25 }, (_, i) => ({
      path: `f${i}.parquet`,
      recordCount: i,
      sizeBytes: i * 10,
    }));
    const bytes = encodeManifest({
      formatVersion: 2,
      entries,
      avro: { codec: 'null', recordsPerBlock: 7 },
    });
    expect(decodeAll(bytes, manifestFile()).map((e) => e.recordCount)).toEqual(
      entries.map((e) => e.recordCount),
    );
  });

  it('gives a corrupt-file error naming the file for a truncated manifest', () => {
    const bytes = encodeManifest({
      formatVersion: 2,
      entries: [{ path: 'a', recordCount: 1, sizeBytes: 1 }],
    });
    const error = icebergErrorOf(() =>
      decodeAll(bytes.subarray(0, bytes.length - 20), manifestFile()),
    );
    expect(error.kind).toBe('corrupt-file');
    expect(error.context.file).toBe('file:/t/metadata/m0.avro');
    expect(error.message).toContain('file:/t/metadata/m0.avro');
  });

  it('gives a corrupt-file error for damaged bytes and for a file that is not Avro', () => {
    const bytes = Buffer.from(
      encodeManifest({ formatVersion: 2, entries: [{ path: 'a', recordCount: 1, sizeBytes: 1 }] }),
    );
    // Damage the compressed block (after the header); deflate or the sync check must notice.
    for (let i = bytes.length - 40; i < bytes.length - 17; i++) bytes[i] = 0xff;
    expect(icebergErrorOf(() => decodeAll(bytes, manifestFile())).kind).toBe('corrupt-file');
    const notAvro = icebergErrorOf(() => decodeAll(Buffer.from('{"not":"avro"}'), manifestFile()));
    expect(notAvro.kind).toBe('corrupt-file');
    expect(notAvro.message).toMatch(/bad magic.*m0\.avro/);
  });
});
