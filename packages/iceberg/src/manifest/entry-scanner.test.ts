import { describe, expect, it } from 'vitest';
import { icebergErrorOf } from '../testing/iceberg-error-of.ts';
import { encodeAvroContainer } from '../testing/avro-writer.ts';
import { encodeManifest, manifestEntrySchema } from '../testing/manifest-writer.ts';
import { scanManifest, type EntryView } from './entry-scanner.ts';
import type { ManifestFile } from './manifest-file.ts';

const BIG = '9007199254740993'; // 2^53 + 1: not a safe integer

function manifestFile(overrides: Partial<ManifestFile> = {}): ManifestFile {
  return {
    path: 'file:/t/metadata/scan.avro',
    length: 1,
    partitionSpecId: 0,
    content: 0,
    sequenceNumber: '7',
    minSequenceNumber: '7',
    addedSnapshotId: '8744736658442914487',
    addedFilesCount: null,
    existingFilesCount: null,
    deletedFilesCount: null,
    addedRowsCount: null,
    existingRowsCount: null,
    deletedRowsCount: null,
    ...overrides,
  };
}

/** What the view shows for each entry (copied: the view is reused). */
function scanAll(bytes: Uint8Array, manifest = manifestFile()): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  scanManifest(bytes, manifest, (v: EntryView) =>
    out.push({
      status: v.status,
      snapshotId: v.snapshotId,
      sequenceNumber: v.sequenceNumber,
      fileSequenceNumber: v.fileSequenceNumber,
      content: v.content,
      path: v.filePath(),
      format: v.fileFormat(),
      partition: v.partition(),
      recordCount: v.recordCount,
      size: v.fileSizeInBytes,
      referenced: v.referencedDataFile(),
    }),
  );
  return out;
}

describe('scanManifest', () => {
  it('reads a v1 manifest: explicit snapshot ids, the list sequence number, data files only', () => {
    const bytes = encodeManifest({
      formatVersion: 1,
      partitionFields: [{ name: 'day', type: 'int' }],
      entries: [
        {
          snapshotId: '42',
          path: 'a.parquet',
          recordCount: 3,
          sizeBytes: 30,
          partition: { day: 5 },
        },
        { status: 2, snapshotId: BIG, path: 'b.parquet', recordCount: 1, sizeBytes: 2 ** 40 },
      ],
    });
    expect(scanAll(bytes, manifestFile({ sequenceNumber: '0' }))).toEqual([
      expect.objectContaining({
        status: 1,
        snapshotId: '42',
        sequenceNumber: 0,
        content: 0,
        path: 'a.parquet',
        format: 'PARQUET',
        partition: { day: 5 },
        recordCount: 3,
        size: 30,
      }),
      expect.objectContaining({
        status: 2,
        snapshotId: BIG,
        partition: { day: null },
        size: 2 ** 40,
      }),
    ]);
  });

  it('reads v2 entries with exact 64-bit values, inheriting nulls for ADDED entries', () => {
    const bytes = encodeManifest({
      formatVersion: 2,
      partitionFields: [
        { name: 'region', type: 'string' },
        { name: 'bucket', type: 'long' },
      ],
      entries: [
        { path: 'a', recordCount: 1, sizeBytes: 1, partition: { region: 'eu', bucket: BIG } },
        {
          status: 0,
          snapshotId: BIG,
          sequenceNumber: BIG,
          fileSequenceNumber: '3',
          path: 'ü/b',
          recordCount: 2,
          sizeBytes: 2,
          partition: { region: null, bucket: -5 },
        },
      ],
    });
    const [a, b] = scanAll(bytes);
    expect(a).toMatchObject({
      snapshotId: '8744736658442914487',
      sequenceNumber: 7,
      fileSequenceNumber: 7,
      partition: { region: 'eu', bucket: BIG },
    });
    expect(b).toMatchObject({
      status: 0,
      snapshotId: BIG,
      sequenceNumber: BIG,
      fileSequenceNumber: 3,
      path: 'ü/b',
      partition: { region: null, bucket: -5 },
    });
  });

  it('reads v3 delete entries: referenced data file, or the equal file_path bounds of a position delete', () => {
    const bytes = encodeManifest({
      formatVersion: 3,
      content: 'deletes',
      entries: [
        {
          content: 1,
          format: 'PUFFIN',
          path: 'dv.puffin',
          recordCount: 3,
          sizeBytes: 90,
          referencedDataFile: 'data/a.parquet',
          contentOffset: 4,
          contentSizeInBytes: 40,
        },
        {
          content: 1,
          path: 'pos.parquet',
          recordCount: 1,
          sizeBytes: 10,
          filePathBounds: { lower: 'data/b.parquet', upper: 'data/b.parquet' },
        },
        {
          content: 1,
          path: 'pos2.parquet',
          recordCount: 1,
          sizeBytes: 10,
          filePathBounds: { lower: 'data/b.parquet', upper: 'data/c.parquet' },
        },
        { content: 2, path: 'eq.parquet', recordCount: 2, sizeBytes: 20 },
      ],
    });
    const views: { dv: boolean; offset: number | null; size: number | null }[] = [];
    scanManifest(bytes, manifestFile({ content: 1 }), (v) =>
      views.push({ dv: v.isDeletionVector(), offset: v.contentOffset, size: v.contentSizeInBytes }),
    );
    expect(views).toEqual([
      { dv: true, offset: 4, size: 40 },
      { dv: false, offset: null, size: null },
      { dv: false, offset: null, size: null },
      { dv: false, offset: null, size: null },
    ]);
    expect(
      scanAll(bytes, manifestFile({ content: 1 })).map((e) => [e.content, e.referenced]),
    ).toEqual([
      [1, 'data/a.parquet'],
      [1, 'data/b.parquet'],
      [1, null],
      [2, null],
    ]);
  });

  it('skips fields it does not know, of every Avro type, in the entry and in data_file', () => {
    const schema = manifestEntrySchema(2, [{ name: 'day', type: 'int' }]) as {
      fields: { name: string; type: unknown }[];
    };
    const extra = [
      { name: 'x_map', type: { type: 'map', values: ['null', 'double'] } },
      { name: 'x_fixed', type: { type: 'fixed', name: 'f4', size: 4 } },
      { name: 'x_enum', type: { type: 'enum', name: 'e', symbols: ['A', 'B'] } },
      { name: 'x_float', type: 'float' },
      { name: 'x_bool', type: 'boolean' },
      { name: 'x_union', type: ['null', 'string', 'double'] },
      {
        name: 'x_nested',
        type: {
          type: 'array',
          items: { type: 'record', name: 'n', fields: [{ name: 's', type: 'string' }] },
        },
      },
      { name: 'x_ref', type: 'f4' },
    ];
    // data_file's copies refer to the named types by name (a name is defined once).
    const named: Record<string, unknown> = {
      x_fixed: 'f4',
      x_enum: 'e',
      x_nested: { type: 'array', items: 'n' },
    };
    const extraRefs = extra.map((f) => ({ ...f, type: named[f.name] ?? f.type }));
    const dataFile = schema.fields.find((f) => f.name === 'data_file')!.type as {
      fields: unknown[];
    };
    const withExtra = {
      ...schema,
      fields: [
        ...schema.fields.slice(0, 1),
        ...extra,
        ...schema.fields.slice(1, -1),
        {
          ...schema.fields.at(-1),
          type: { ...dataFile, fields: [...extraRefs, ...dataFile.fields] },
        },
      ],
    };
    const values = {
      x_map: { a: 1.5, b: null },
      x_fixed: Buffer.from('abcd'),
      x_enum: 'B',
      x_float: 0.5,
      x_bool: true,
      x_union: '9',
      x_nested: [{ s: 'one' }, { s: 'two' }],
      x_ref: Buffer.from('wxyz'),
    };
    const record = (path: string, day: number): object => ({
      status: 1,
      ...values,
      snapshot_id: null,
      sequence_number: null,
      file_sequence_number: null,
      data_file: {
        ...values,
        content: 0,
        file_path: path,
        file_format: 'PARQUET',
        partition: { day },
        record_count: 10,
        file_size_in_bytes: 100,
        column_sizes: [{ key: 1, value: 5 }],
        value_counts: null,
        null_value_counts: null,
        nan_value_counts: null,
        lower_bounds: [{ key: 1, value: Buffer.from('lo') }],
        upper_bounds: null,
        key_metadata: Buffer.from('k'),
        split_offsets: [4, 8],
        equality_ids: null,
        sort_order_id: 0,
        referenced_data_file: null,
      },
    });
    const bytes = encodeAvroContainer(withExtra, [record('a', 1), record('b', 2)]);
    expect(scanAll(bytes).map((e) => [e.path, e.partition, e.recordCount, e.size])).toEqual([
      ['a', { day: 1 }, 10, 100],
      ['b', { day: 2 }, 10, 100],
    ]);
  });

  it('gives corrupt-file errors naming the file: unknown status or content, records past the block, bad unions', () => {
    const one = (e: object): Buffer =>
      encodeManifest({
        formatVersion: 2,
        entries: [{ path: 'a', recordCount: 1, sizeBytes: 1, ...e }],
        avro: { codec: 'null' },
      });
    const status = icebergErrorOf(() => scanAll(one({ status: 3 as 0 })));
    expect(status.kind).toBe('corrupt-file');
    expect(status.message).toMatch(/unknown entry status 3.*scan\.avro/);
    expect(icebergErrorOf(() => scanAll(one({ content: 7 as 0 }))).message).toMatch(
      /unknown file content 7/,
    );

    // The block says two records but holds one: the second runs past the block's end.
    const bytes = Buffer.from(one({}));
    const blockAt = bytes.indexOf(bytes.subarray(bytes.length - 16)) + 16; // after the header's sync
    expect(bytes[blockAt]).toBe(0x02); // zig-zag 1
    const twice = Buffer.from(bytes);
    twice[blockAt] = 0x04; // zig-zag 2
    const truncated = icebergErrorOf(() => scanAll(twice));
    expect(truncated.kind).toBe('corrupt-file');
    expect(truncated.message).toMatch(/truncated record 1/);
    expect(truncated.context.file).toBe('file:/t/metadata/scan.avro');

    // snapshot_id is a union [null, long]: branch 5 does not exist.
    let pos = blockAt + 1;
    while ((bytes[pos++]! & 0x80) !== 0); // the block's byte size
    const badUnion = Buffer.from(bytes);
    badUnion[pos + 1] = 0x0a; // after status (one byte): the union index, zig-zag 5
    expect(icebergErrorOf(() => scanAll(badUnion)).message).toMatch(/union branch 5/);
  });

  it('refuses a schema whose kept fields have unexpected types, naming the field', () => {
    const schema = manifestEntrySchema(2, []) as { fields: { name: string; type: unknown }[] };
    const broken = {
      ...schema,
      fields: schema.fields.map((f) => (f.name === 'status' ? { ...f, type: 'string' } : f)),
    };
    const bytes = encodeAvroContainer(broken, [], {});
    const error = icebergErrorOf(() => scanAll(Buffer.concat([bytes])));
    expect(error.kind).toBe('corrupt-file');
    expect(error.message).toMatch(/status has type "string"/);
  });
});
