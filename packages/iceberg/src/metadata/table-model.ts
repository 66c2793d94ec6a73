import type { IcebergSchema } from '@icepack/types';

// The validated, camelCase model of a table's metadata. 64-bit ids and sequence numbers are
// exact decimal strings; spec codes (operations, ref types, transforms) keep the spec's text.

export const SnapshotOperation = {
  append: 'append',
  replace: 'replace',
  overwrite: 'overwrite',
  delete: 'delete',
} as const;
export type SnapshotOperation = (typeof SnapshotOperation)[keyof typeof SnapshotOperation];

export interface Snapshot {
  readonly snapshotId: string;
  readonly parentSnapshotId: string | null;
  /** "0" for v1 tables. */
  readonly sequenceNumber: string;
  readonly timestampMs: number;
  /** Null only for old v1 snapshots that list `manifests` inline. */
  readonly manifestList: string | null;
  readonly manifests: readonly string[];
  /** Absent only in old v1 metadata. */
  readonly operation: SnapshotOperation | null;
  readonly summary: Readonly<Record<string, string>>;
  readonly schemaId: number | null;
}

export interface SnapshotRef {
  readonly name: string;
  readonly type: 'branch' | 'tag';
  readonly snapshotId: string;
  readonly maxRefAgeMs?: number;
  readonly maxSnapshotAgeMs?: number;
  readonly minSnapshotsToKeep?: number;
}

export interface PartitionField {
  readonly sourceId: number;
  readonly fieldId: number;
  readonly name: string;
  readonly transform: string;
}

export interface PartitionSpec {
  readonly specId: number;
  readonly fields: readonly PartitionField[];
}

export interface SortField {
  readonly sourceId: number;
  readonly transform: string;
  readonly direction: 'asc' | 'desc';
  readonly nullOrder: 'nulls-first' | 'nulls-last';
}

export interface SortOrder {
  readonly orderId: number;
  readonly fields: readonly SortField[];
}

export interface TableSchema {
  readonly schemaId: number;
  /** The wire struct as written (fields, nested types). */
  readonly struct: IcebergSchema;
  /** Field id → full dotted column name (`address.city`). */
  readonly columnNames: ReadonlyMap<number, string>;
  /** Field id → primitive type text (`long`, `date`, `decimal(9,2)` …) for primitive fields. */
  readonly columnTypes: ReadonlyMap<number, string>;
}

export interface TableMetadataModel {
  readonly formatVersion: 1 | 2 | 3;
  readonly tableUuid: string;
  readonly location: string;
  readonly lastUpdatedMs: number;
  readonly lastSequenceNumber: string;
  readonly currentSnapshotId: string | null;
  readonly currentSchemaId: number;
  readonly schemas: ReadonlyMap<number, TableSchema>;
  readonly defaultSpecId: number;
  readonly partitionSpecs: ReadonlyMap<number, PartitionSpec>;
  readonly defaultSortOrderId: number;
  readonly sortOrders: ReadonlyMap<number, SortOrder>;
  /** In commit order (as listed by the metadata). */
  readonly snapshots: readonly Snapshot[];
  readonly snapshotsById: ReadonlyMap<string, Snapshot>;
  readonly refs: ReadonlyMap<string, SnapshotRef>;
  readonly properties: Readonly<Record<string, string>>;
}
