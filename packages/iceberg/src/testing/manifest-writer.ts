import { encodeAvroContainer, type AvroContainerOptions } from './avro-writer.ts';

// Writes manifests and manifest lists with the Avro schemas of the Iceberg spec (v1/v2/v3),
// column statistics included, so tests and benchmarks decode what Spark would write.

export interface TestPartitionField {
  readonly name: string;
  /** Avro type of the value, e.g. `int`, `string`, `long`. Nullable in the file. */
  readonly type: string;
  readonly fieldId?: number;
  readonly sourceId?: number;
  readonly transform?: string;
}

export interface TestEntry {
  /** Default 1 (ADDED). */
  readonly status?: 0 | 1 | 2;
  /** null → inherited from the manifest list (v2+). Default null. */
  readonly snapshotId?: string | null;
  readonly sequenceNumber?: string | null;
  readonly fileSequenceNumber?: string | null;
  /** Default 0 (data). */
  readonly content?: 0 | 1 | 2;
  readonly path: string;
  /** Default PARQUET. */
  readonly format?: string;
  readonly partition?: Readonly<Record<string, unknown>>;
  readonly recordCount: number;
  readonly sizeBytes: number;
  readonly referencedDataFile?: string;
  readonly contentOffset?: number;
  readonly contentSizeInBytes?: number;
  /** Columns with statistics written (sizes, counts, bounds). Default 8. */
  readonly statsColumns?: number;
  /** Position deletes: bounds of the `file_path` column (field 2147483546), as writers set them. */
  readonly filePathBounds?: { readonly lower: string; readonly upper: string };
}

export interface TestManifest {
  readonly formatVersion: 1 | 2 | 3;
  readonly partitionFields?: readonly TestPartitionField[];
  readonly specId?: number;
  /** `data` or `deletes`. Default `data`. */
  readonly content?: 'data' | 'deletes';
  readonly entries: readonly TestEntry[];
  readonly avro?: AvroContainerOptions;
}

const nullable = (type: unknown): unknown[] => ['null', type];

function kvArray(name: string, valueType: string, keyId: number, valueId: number): unknown {
  return {
    type: 'array',
    logicalType: 'map',
    items: {
      type: 'record',
      name,
      fields: [
        { name: 'key', type: 'int', 'field-id': keyId },
        { name: 'value', type: valueType, 'field-id': valueId },
      ],
    },
  };
}

export function manifestEntrySchema(
  formatVersion: 1 | 2 | 3,
  partitionFields: readonly TestPartitionField[],
): object {
  const dataFileFields: object[] = [
    ...(formatVersion >= 2 ? [{ name: 'content', type: 'int', 'field-id': 134 }] : []),
    { name: 'file_path', type: 'string', 'field-id': 100 },
    { name: 'file_format', type: 'string', 'field-id': 101 },
    {
      name: 'partition',
      'field-id': 102,
      type: {
        type: 'record',
        name: 'r102',
        fields: partitionFields.map((f, i) => ({
          name: f.name,
          type: nullable(f.type),
          default: null,
          'field-id': f.fieldId ?? 1000 + i,
        })),
      },
    },
    { name: 'record_count', type: 'long', 'field-id': 103 },
    { name: 'file_size_in_bytes', type: 'long', 'field-id': 104 },
    ...(formatVersion === 1
      ? [{ name: 'block_size_in_bytes', type: 'long', 'field-id': 105 }]
      : []),
    {
      name: 'column_sizes',
      type: nullable(kvArray('k117_v118', 'long', 117, 118)),
      default: null,
      'field-id': 108,
    },
    {
      name: 'value_counts',
      type: nullable(kvArray('k119_v120', 'long', 119, 120)),
      default: null,
      'field-id': 109,
    },
    {
      name: 'null_value_counts',
      type: nullable(kvArray('k121_v122', 'long', 121, 122)),
      default: null,
      'field-id': 110,
    },
    {
      name: 'nan_value_counts',
      type: nullable(kvArray('k138_v139', 'long', 138, 139)),
      default: null,
      'field-id': 137,
    },
    {
      name: 'lower_bounds',
      type: nullable(kvArray('k126_v127', 'bytes', 126, 127)),
      default: null,
      'field-id': 125,
    },
    {
      name: 'upper_bounds',
      type: nullable(kvArray('k129_v130', 'bytes', 129, 130)),
      default: null,
      'field-id': 128,
    },
    { name: 'key_metadata', type: nullable('bytes'), default: null, 'field-id': 131 },
    {
      name: 'split_offsets',
      type: nullable({ type: 'array', items: 'long', 'element-id': 133 }),
      default: null,
      'field-id': 132,
    },
    ...(formatVersion >= 2
      ? [
          {
            name: 'equality_ids',
            type: nullable({ type: 'array', items: 'int', 'element-id': 136 }),
            default: null,
            'field-id': 135,
          },
        ]
      : []),
    { name: 'sort_order_id', type: nullable('int'), default: null, 'field-id': 140 },
    ...(formatVersion >= 2
      ? [{ name: 'referenced_data_file', type: nullable('string'), default: null, 'field-id': 143 }]
      : []),
    ...(formatVersion >= 3
      ? [
          { name: 'first_row_id', type: nullable('long'), default: null, 'field-id': 142 },
          { name: 'content_offset', type: nullable('long'), default: null, 'field-id': 144 },
          { name: 'content_size_in_bytes', type: nullable('long'), default: null, 'field-id': 145 },
        ]
      : []),
  ];
  return {
    type: 'record',
    name: 'manifest_entry',
    fields: [
      { name: 'status', type: 'int', 'field-id': 0 },
      formatVersion === 1
        ? { name: 'snapshot_id', type: 'long', 'field-id': 1 }
        : { name: 'snapshot_id', type: nullable('long'), default: null, 'field-id': 1 },
      ...(formatVersion >= 2
        ? [
            { name: 'sequence_number', type: nullable('long'), default: null, 'field-id': 3 },
            { name: 'file_sequence_number', type: nullable('long'), default: null, 'field-id': 4 },
          ]
        : []),
      {
        name: 'data_file',
        type: { type: 'record', name: 'r2', fields: dataFileFields },
        'field-id': 2,
      },
    ],
  };
}

function stats(columns: number, value: (i: number) => unknown): { key: number; value: unknown }[] {
  return Array.from({ length: columns }, (_, i) => ({ key: i + 1, value: value(i) }));
}

function withPathBound(
  bounds: { key: number; value: unknown }[],
  path: string | undefined,
): { key: number; value: unknown }[] {
  return path === undefined ? bounds : [...bounds, { key: 2147483546, value: Buffer.from(path) }];
}

function entryRecord(
  formatVersion: 1 | 2 | 3,
  e: TestEntry,
  fields: readonly TestPartitionField[],
): object {
  const columns = e.statsColumns ?? 8;
  const partition: Record<string, unknown> = {};
  for (const f of fields) partition[f.name] = e.partition?.[f.name] ?? null;
  const bound = Buffer.from('bound-value-0000');
  const dataFile: Record<string, unknown> = {
    file_path: e.path,
    file_format: e.format ?? 'PARQUET',
    partition,
    record_count: e.recordCount,
    file_size_in_bytes: e.sizeBytes,
    column_sizes: stats(columns, (i) => 1000 + i),
    value_counts: stats(columns, () => e.recordCount),
    null_value_counts: stats(columns, () => 0),
    nan_value_counts: null,
    lower_bounds: withPathBound(
      stats(columns, () => bound),
      e.filePathBounds?.lower,
    ),
    upper_bounds: withPathBound(
      stats(columns, () => bound),
      e.filePathBounds?.upper,
    ),
    key_metadata: null,
    split_offsets: [4],
    sort_order_id: 0,
  };
  if (formatVersion === 1) dataFile.block_size_in_bytes = 67108864;
  if (formatVersion >= 2) {
    dataFile.content = e.content ?? 0;
    dataFile.equality_ids = e.content === 2 ? [1] : null;
    dataFile.referenced_data_file = e.referencedDataFile ?? null;
  }
  if (formatVersion >= 3) {
    dataFile.first_row_id = null;
    dataFile.content_offset = e.contentOffset ?? null;
    dataFile.content_size_in_bytes = e.contentSizeInBytes ?? null;
  }
  const record: Record<string, unknown> = { status: e.status ?? 1, data_file: dataFile };
  if (formatVersion === 1) {
    record.snapshot_id = e.snapshotId ?? '1';
  } else {
    record.snapshot_id = e.snapshotId ?? null;
    record.sequence_number = e.sequenceNumber ?? null;
    record.file_sequence_number = e.fileSequenceNumber ?? null;
  }
  return record;
}

/** A manifest file's bytes. */
export function encodeManifest(manifest: TestManifest): Buffer {
  const fields = manifest.partitionFields ?? [];
  const schema = manifestEntrySchema(manifest.formatVersion, fields);
  return encodeAvroContainer(
    schema,
    manifest.entries.map((e) => entryRecord(manifest.formatVersion, e, fields)),
    {
      ...manifest.avro,
      metadata: {
        'format-version': String(manifest.formatVersion),
        'partition-spec-id': String(manifest.specId ?? 0),
        'partition-spec': JSON.stringify(
          fields.map((f, i) => ({
            name: f.name,
            transform: f.transform ?? 'identity',
            'source-id': f.sourceId ?? i + 1,
            'field-id': f.fieldId ?? 1000 + i,
          })),
        ),
        content: manifest.content ?? 'data',
        ...manifest.avro?.metadata,
      },
    },
  );
}

export interface TestManifestListEntry {
  readonly path: string;
  readonly length: number;
  readonly specId?: number;
  readonly content?: 0 | 1;
  readonly sequenceNumber: string;
  readonly minSequenceNumber?: string;
  readonly addedSnapshotId: string;
  readonly addedFiles?: number;
  readonly existingFiles?: number;
  readonly deletedFiles?: number;
  readonly addedRows?: number;
  readonly existingRows?: number;
  readonly deletedRows?: number;
}

export function manifestListSchema(formatVersion: 1 | 2 | 3): object {
  const v1 = formatVersion === 1;
  const fieldSummary = {
    type: 'record',
    name: 'r508',
    fields: [
      { name: 'contains_null', type: 'boolean', 'field-id': 509 },
      { name: 'contains_nan', type: nullable('boolean'), default: null, 'field-id': 518 },
      { name: 'lower_bound', type: nullable('bytes'), default: null, 'field-id': 510 },
      { name: 'upper_bound', type: nullable('bytes'), default: null, 'field-id': 511 },
    ],
  };
  return {
    type: 'record',
    name: 'manifest_file',
    fields: [
      { name: 'manifest_path', type: 'string', 'field-id': 500 },
      { name: 'manifest_length', type: 'long', 'field-id': 501 },
      { name: 'partition_spec_id', type: 'int', 'field-id': 502 },
      ...(v1
        ? []
        : [
            { name: 'content', type: 'int', 'field-id': 517 },
            { name: 'sequence_number', type: 'long', 'field-id': 515 },
            { name: 'min_sequence_number', type: 'long', 'field-id': 516 },
          ]),
      { name: 'added_snapshot_id', type: 'long', 'field-id': 503 },
      { name: v1 ? 'added_data_files_count' : 'added_files_count', type: 'int', 'field-id': 504 },
      {
        name: v1 ? 'existing_data_files_count' : 'existing_files_count',
        type: 'int',
        'field-id': 505,
      },
      {
        name: v1 ? 'deleted_data_files_count' : 'deleted_files_count',
        type: 'int',
        'field-id': 506,
      },
      { name: 'added_rows_count', type: 'long', 'field-id': 512 },
      { name: 'existing_rows_count', type: 'long', 'field-id': 513 },
      { name: 'deleted_rows_count', type: 'long', 'field-id': 514 },
      {
        name: 'partitions',
        type: nullable({ type: 'array', items: fieldSummary, 'element-id': 508 }),
        default: null,
        'field-id': 507,
      },
      ...(formatVersion >= 3
        ? [{ name: 'first_row_id', type: nullable('long'), default: null, 'field-id': 520 }]
        : []),
    ],
  };
}

/** A manifest list file's bytes. */
export function encodeManifestList(
  formatVersion: 1 | 2 | 3,
  manifests: readonly TestManifestListEntry[],
  avro?: AvroContainerOptions,
): Buffer {
  const v1 = formatVersion === 1;
  const records = manifests.map((m) => ({
    manifest_path: m.path,
    manifest_length: m.length,
    partition_spec_id: m.specId ?? 0,
    ...(v1
      ? {}
      : {
          content: m.content ?? 0,
          sequence_number: m.sequenceNumber,
          min_sequence_number: m.minSequenceNumber ?? m.sequenceNumber,
        }),
    added_snapshot_id: m.addedSnapshotId,
    [v1 ? 'added_data_files_count' : 'added_files_count']: m.addedFiles ?? 0,
    [v1 ? 'existing_data_files_count' : 'existing_files_count']: m.existingFiles ?? 0,
    [v1 ? 'deleted_data_files_count' : 'deleted_files_count']: m.deletedFiles ?? 0,
    added_rows_count: m.addedRows ?? 0,
    existing_rows_count: m.existingRows ?? 0,
    deleted_rows_count: m.deletedRows ?? 0,
    partitions: null,
    ...(formatVersion >= 3 ? { first_row_id: null } : {}),
  }));
  return encodeAvroContainer(manifestListSchema(formatVersion), records, {
    ...avro,
    metadata: { 'format-version': String(formatVersion), ...avro?.metadata },
  });
}
