import {
  ValidationError,
  parseTableMetadata,
  validateTableMetadata,
  type IcebergPartitionField,
  type IcebergSchema,
  type IcebergSnapshot,
  type TableMetadata,
} from '@icepack/types';
import { IcebergError, IcebergErrorKind } from '../errors/iceberg-error.ts';
import { indexSchema } from './schema-index.ts';
import type {
  PartitionSpec,
  Snapshot,
  SnapshotRef,
  SortOrder,
  TableMetadataModel,
  TableSchema,
} from './table-model.ts';

/** v1 metadata without field ids numbers partition fields from 1000 in order (spec). */
const FIRST_PARTITION_FIELD_ID = 1000;
/** Java wrote -1 for "no current snapshot". */
const NO_SNAPSHOT = '-1';

/**
 * Parses the text of a `*.metadata.json` into the model. Errors are `IcebergError` of kind
 * `invalid-metadata` naming the file and, through the cause, the bad field.
 */
export function parseTableModel(text: string, file?: string): TableMetadataModel {
  return convert(() => parseTableMetadata(text), file);
}

/** Converts already-decoded wire metadata (e.g. from a LoadTableResult) into the model. */
export function toTableModel(metadata: unknown, file?: string): TableMetadataModel {
  return convert(() => validateTableMetadata(metadata), file);
}

function convert(parse: () => TableMetadata, file: string | undefined): TableMetadataModel {
  let wire: TableMetadata;
  try {
    wire = parse();
  } catch (error) {
    if (error instanceof ValidationError) {
      throw new IcebergError(IcebergErrorKind.invalidMetadata, error.message, {
        cause: error,
        ...(file === undefined ? {} : { file }),
      });
    }
    throw error;
  }
  return tableModelFromWire(wire);
}

/** Converts wire metadata that is already validated (e.g. inside a parsed LoadTableResult). */
export function tableModelFromWire(wire: TableMetadata): TableMetadataModel {
  const schemas = new Map<number, TableSchema>();
  const wireSchemas: IcebergSchema[] =
    wire['format-version'] === 1 ? (wire.schemas ?? [wire.schema]) : wire.schemas;
  for (const struct of wireSchemas) {
    const schemaId = struct['schema-id'] ?? 0;
    const { names, types } = indexSchema(struct);
    schemas.set(schemaId, { schemaId, struct, columnNames: names, columnTypes: types });
  }

  const partitionSpecs = new Map<number, PartitionSpec>();
  const wireSpecs =
    wire['format-version'] === 1 && wire['partition-specs'] === undefined
      ? [{ 'spec-id': wire['default-spec-id'] ?? 0, fields: wire['partition-spec'] }]
      : (wire['partition-specs'] ?? []);
  for (const spec of wireSpecs) {
    partitionSpecs.set(spec['spec-id'], {
      specId: spec['spec-id'],
      fields: spec.fields.map(toPartitionField),
    });
  }

  const sortOrders = new Map<number, SortOrder>();
  for (const order of wire['sort-orders'] ?? [{ 'order-id': 0, fields: [] }]) {
    sortOrders.set(order['order-id'], {
      orderId: order['order-id'],
      fields: order.fields.map((f) => ({
        sourceId: f['source-id'] ?? f['source-ids']?.[0] ?? 0,
        transform: f.transform,
        direction: f.direction,
        nullOrder: f['null-order'],
      })),
    });
  }

  const snapshots = (wire.snapshots ?? []).map(toSnapshot);
  const snapshotsById = new Map(snapshots.map((s) => [s.snapshotId, s]));
  const rawCurrent = wire['current-snapshot-id'] ?? null;
  const currentSnapshotId = rawCurrent === null || rawCurrent === NO_SNAPSHOT ? null : rawCurrent;

  const refs = new Map<string, SnapshotRef>();
  for (const [name, ref] of Object.entries(wire.refs ?? {})) {
    refs.set(name, {
      name,
      type: ref.type,
      snapshotId: ref['snapshot-id'],
      ...(ref['max-ref-age-ms'] === undefined ? {} : { maxRefAgeMs: ref['max-ref-age-ms'] }),
      ...(ref['max-snapshot-age-ms'] === undefined
        ? {}
        : { maxSnapshotAgeMs: ref['max-snapshot-age-ms'] }),
      ...(ref['min-snapshots-to-keep'] === undefined
        ? {}
        : { minSnapshotsToKeep: ref['min-snapshots-to-keep'] }),
    });
  }
  // Metadata written before refs existed: the current snapshot is the main branch (as Java reads it).
  if (!refs.has('main') && currentSnapshotId !== null) {
    refs.set('main', { name: 'main', type: 'branch', snapshotId: currentSnapshotId });
  }

  const defaultSpecId = wire['default-spec-id'] ?? 0;
  const defaultSortOrderId = wire['default-sort-order-id'] ?? 0;
  const currentSchemaId = wire['current-schema-id'] ?? wire.schemas?.[0]?.['schema-id'] ?? 0;
  return {
    formatVersion: wire['format-version'],
    tableUuid: wire['table-uuid'] ?? '',
    location: wire.location,
    lastUpdatedMs: wire['last-updated-ms'],
    lastSequenceNumber: wire['last-sequence-number'] ?? '0',
    currentSnapshotId,
    currentSchemaId,
    schemas,
    defaultSpecId,
    partitionSpecs,
    defaultSortOrderId,
    sortOrders,
    snapshots,
    snapshotsById,
    refs,
    properties: wire.properties ?? {},
  };
}

function toPartitionField(
  field: IcebergPartitionField,
  index: number,
): PartitionSpec['fields'][number] {
  return {
    sourceId: field['source-id'] ?? field['source-ids']?.[0] ?? 0,
    fieldId: field['field-id'] ?? FIRST_PARTITION_FIELD_ID + index,
    name: field.name,
    transform: field.transform,
  };
}

function toSnapshot(s: IcebergSnapshot): Snapshot {
  const { operation, ...summary } = s.summary ?? {};
  return {
    snapshotId: s['snapshot-id'],
    parentSnapshotId: s['parent-snapshot-id'] ?? null,
    sequenceNumber: s['sequence-number'] ?? '0',
    timestampMs: s['timestamp-ms'],
    manifestList: s['manifest-list'] ?? null,
    manifests: s.manifests ?? [],
    operation: operation ?? null,
    summary,
    schemaId: s['schema-id'] ?? null,
  };
}
