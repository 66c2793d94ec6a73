import {
  MAX_TABLE_STATE_PARTITIONS,
  tableStateSchema,
  type PartitionState,
  type RefState,
  type TableState,
} from '@icepack/types';
import type { LoadedTable } from '../metadata/loaded-table.ts';
import {
  currentSnapshot,
  snapshotAncestry,
  snapshotsSinceLast,
} from '../metadata/snapshot-history.ts';
import {
  SnapshotOperation,
  type Snapshot,
  type TableMetadataModel,
} from '../metadata/table-model.ts';
import { ManifestCache } from '../manifest/manifest-cache.ts';
import type { ManifestFile } from '../manifest/manifest-file.ts';
import { deriveFromManifest, readSnapshotManifests } from '../manifest/read-manifests.ts';
import {
  addAggregate,
  aggregateManifest,
  emptyAggregate,
  type AddedFigures,
  type ManifestAggregate,
  type PartitionFigures,
} from './manifest-aggregate.ts';
import { countDanglingDeletes } from './dangling-deletes.ts';
import { renderPartition } from './partition-text.ts';
import { toSizeBuckets } from './size-histogram.ts';
import { formatProblem, resolvePolicy, type PolicyProblem } from '@icepack/policy';

export interface ComputeTableStateOptions {
  /** The table's last state: when its metadata location is unchanged nothing is read. */
  readonly previous?: TableState;
  /**
   * Where manifest aggregates are kept between scans: manifests seen before are not read
   * again. Default: a new cache (everything is read).
   */
  readonly cache?: ManifestCache;
  /**
   * Files below this size count as small: the resolved policy's `minFileSizeBytes`
   * (`@icepack/policy`, with the catalog's and namespace's layers). Default: that policy
   * resolved from the table's own properties alone.
   */
  readonly smallFileThresholdBytes?: number;
  /** When each task type last ran (from the planner/dispatcher); default: the previous state's. */
  readonly lastMaintenance?: TableState['lastMaintenance'];
  /** Partitions listed, worst first. Default and maximum: `MAX_TABLE_STATE_PARTITIONS`. */
  readonly maxPartitions?: number;
  /** Manifests read at once. Default: 8. */
  readonly concurrency?: number;
  /** Told about a table property that could not be used, when the default above resolves it. */
  readonly onPropertyProblem?: (problem: PolicyProblem, text: string) => void;
  readonly now?: () => Date;
  readonly signal?: AbortSignal;
}

const SUMMARY = {
  addedDataFiles: 'added-data-files',
  addedFilesSize: 'added-files-size',
  addedRecords: 'added-records',
  addedDeleteFiles: 'added-delete-files',
} as const;

/**
 * The TableState of maintenance-rules.md for a loaded table. Reads the current snapshot's
 * manifest list and each manifest not already aggregated in the cache (manifests never
 * change, so a manifest seen in an earlier scan is not read again).
 */
export async function computeTableState(
  loaded: LoadedTable,
  options: ComputeTableStateOptions = {},
): Promise<TableState> {
  const now = (options.now ?? (() => new Date()))();
  const { previous } = options;
  const lastMaintenance = options.lastMaintenance ?? previous?.lastMaintenance;
  if (previous !== undefined && previous.metadataLocation === loaded.metadataLocation) {
    return {
      ...previous,
      scannedAt: now.toISOString(),
      ...(lastMaintenance === undefined ? {} : { lastMaintenance }),
    };
  }

  const metadata = loaded.metadata;
  const cache = options.cache ?? new ManifestCache();
  const threshold = options.smallFileThresholdBytes ?? ownPolicyThreshold(metadata, options);
  const totals = await aggregateSnapshot(loaded, threshold, cache, options);

  const state: TableState = {
    table: loaded.id,
    scannedAt: now.toISOString(),
    metadataLocation: loaded.metadataLocation,
    formatVersion: metadata.formatVersion,
    tableUuid: metadata.tableUuid === '' ? 'unknown' : metadata.tableUuid,
    currentSnapshotId: metadata.currentSnapshotId,
    lastSequenceNumber: metadata.lastSequenceNumber,
    properties: { ...metadata.properties },
    partitionSpec: partitionSpecState(metadata),
    sortOrder: sortOrderState(metadata),
    files: {
      dataFiles: totals.dataFiles,
      dataBytes: totals.dataBytes,
      records: totals.records,
      smallFiles: totals.smallFiles,
      smallFileBytes: totals.smallFileBytes,
      smallFileThresholdBytes: threshold,
      positionDeleteFiles: totals.positionDeleteFiles,
      equalityDeleteFiles: totals.equalityDeleteFiles,
      deletionVectors: totals.deletionVectors,
      deleteFileBytes: totals.deleteFileBytes + sum(totals.puffinFiles.values()),
      positionDeleteRecords: totals.positionDeleteRecords,
      equalityDeleteRecords: totals.equalityDeleteRecords,
      danglingDeletes: danglingDeletes(totals),
    },
    sizeHistogram: toSizeBuckets(totals.histogramFiles, totals.histogramBytes),
    snapshots: snapshotFigures(metadata, lastMaintenance?.cleanup),
    newData: newData(metadata, totals),
    refs: refStates(metadata),
    ...partitionFigures(
      metadata,
      totals.partitions,
      Math.min(options.maxPartitions ?? MAX_TABLE_STATE_PARTITIONS, MAX_TABLE_STATE_PARTITIONS),
    ),
    ...(lastMaintenance === undefined ? {} : { lastMaintenance }),
  };
  // The planner trusts this message: check the contract here rather than downstream.
  return tableStateSchema.parse(state);
}

/** Measuring does not decide: the bound comes from the one policy resolution. */
function ownPolicyThreshold(
  metadata: TableMetadataModel,
  options: ComputeTableStateOptions,
): number {
  const { policy, problems } = resolvePolicy(metadata.properties);
  for (const problem of problems) options.onPropertyProblem?.(problem, formatProblem(problem));
  return policy.minFileSizeBytes;
}

async function aggregateSnapshot(
  loaded: LoadedTable,
  threshold: number,
  cache: ManifestCache,
  options: ComputeTableStateOptions,
): Promise<ManifestAggregate> {
  const totals = emptyAggregate();
  const snapshot = currentSnapshot(loaded.metadata);
  if (snapshot === null) return totals;
  const manifests = await readSnapshotManifests(loaded.io, snapshot, cache, options.signal);
  const schema = loaded.metadata.schemas.get(loaded.metadata.currentSchemaId);
  const kind = `health:${threshold}`;
  const aggregateOf = (manifest: ManifestFile): Promise<ManifestAggregate> =>
    deriveFromManifest(
      loaded.io,
      manifest,
      cache,
      kind,
      () => {
        const spec = loaded.metadata.partitionSpecs.get(manifest.partitionSpecId);
        return aggregateManifest({
          specId: manifest.partitionSpecId,
          unpartitionedSpec: spec !== undefined && spec.fields.length === 0,
          smallFileThresholdBytes: threshold,
          renderPartition: (p) => renderPartition(p, spec, schema),
        });
      },
      options.signal,
    );
  const aggregates = await mapConcurrent(manifests, options.concurrency ?? 8, aggregateOf);
  for (const aggregate of aggregates) addAggregate(totals, aggregate);
  return totals;
}

async function mapConcurrent<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

/** The delete files that apply to no live data file (`countDanglingDeletes`). */
function danglingDeletes(totals: ManifestAggregate): TableState['files']['danglingDeletes'] {
  // Only the paths delete files name are looked up: mark those found among the data files.
  const named = new Set<number>();
  for (const d of totals.deletes)
    if (d.referencedPathHash !== null) named.add(d.referencedPathHash);
  const live = new Set<number>();
  if (named.size > 0) for (const h of totals.dataPathHashes) if (named.has(h)) live.add(h);
  return countDanglingDeletes(totals.deletes, {
    minSequenceByPartition: totals.dataMinSequence,
    hasPath: (hash) => live.has(hash),
  });
}

function sum(values: Iterable<number>): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}

function partitionSpecState(
  metadata: TableMetadataModel,
  specId = metadata.defaultSpecId,
): TableState['partitionSpec'] {
  const spec = metadata.partitionSpecs.get(specId);
  const schema = metadata.schemas.get(metadata.currentSchemaId);
  return {
    specId,
    fields: (spec?.fields ?? []).map((f) => {
      // The name a filter on the partition uses (Iceberg binds it to the current schema).
      const column = schema?.columnNames.get(f.sourceId);
      return {
        sourceId: f.sourceId,
        fieldId: f.fieldId,
        name: f.name,
        transform: f.transform,
        ...(column === undefined ? {} : { column }),
      };
    }),
  };
}

function sortOrderState(metadata: TableMetadataModel): TableState['sortOrder'] {
  const order = metadata.sortOrders.get(metadata.defaultSortOrderId);
  const schema = metadata.schemas.get(metadata.currentSchemaId);
  return {
    orderId: metadata.defaultSortOrderId,
    fields: (order?.fields ?? []).map((f) => {
      const column = schema?.columnNames.get(f.sourceId);
      return {
        sourceId: f.sourceId,
        ...(column === undefined ? {} : { column }),
        transform: f.transform,
        direction: f.direction,
        nullOrder: f.nullOrder,
      };
    }),
  };
}

function snapshotFigures(
  metadata: TableMetadataModel,
  lastExpireAt: string | undefined,
): TableState['snapshots'] {
  const times = metadata.snapshots.map((s) => s.timestampMs);
  const since = snapshotsSinceLast(metadata, SnapshotOperation.replace);
  const expireMs = lastExpireAt === undefined ? undefined : Date.parse(lastExpireAt);
  return {
    total: metadata.snapshots.length,
    ...(expireMs === undefined
      ? {}
      : { sinceLastExpire: times.filter((t) => t > expireMs).length }),
    sinceLastRewrite: since.snapshots.length,
    ...(times.length === 0
      ? {}
      : {
          oldestAt: new Date(Math.min(...times)).toISOString(),
          newestAt: new Date(Math.max(...times)).toISOString(),
        }),
    expiry: expiryFigures(metadata),
  };
}

function oldestAt(snapshots: readonly Snapshot[]): string | undefined {
  if (snapshots.length === 0) return undefined;
  let oldest = Infinity;
  for (const s of snapshots) oldest = Math.min(oldest, s.timestampMs);
  return new Date(oldest).toISOString();
}

/**
 * What `expire_snapshots` could remove before a retention applies: the current lineage's
 * snapshots that no other ref reaches (it keeps the newest `retain_last` of them and those
 * inside the retention), and snapshots no ref reaches (it removes those older than
 * `older_than`). Tag and branch heads, and the lineage of a branch with a retention of its
 * own, are left out, so the figures never promise more than an expiry removes.
 */
function expiryFigures(
  metadata: TableMetadataModel,
): NonNullable<TableState['snapshots']['expiry']> {
  const main = snapshotAncestry(metadata);
  const mainIds = new Set(main.map((s) => s.snapshotId));
  const otherRefs = new Set<string>();
  for (const ref of metadata.refs.values()) {
    if (ref.name === 'main') continue;
    // A tag holds its snapshot. A branch with a snapshot retention of its own holds its
    // lineage by that retention; one without follows the expiry's own `older_than` and
    // `retain_last` (Iceberg's RemoveSnapshots), like main, and so surely holds only its head.
    const ownRetention = ref.minSnapshotsToKeep !== undefined || ref.maxSnapshotAgeMs !== undefined;
    if (ref.type === 'tag' || !ownRetention) otherRefs.add(ref.snapshotId);
    else for (const s of snapshotAncestry(metadata, ref.snapshotId)) otherRefs.add(s.snapshotId);
  }
  const mainOnly = main.filter((s) => !otherRefs.has(s.snapshotId));
  const unreferenced = metadata.snapshots.filter(
    (s) => !mainIds.has(s.snapshotId) && !otherRefs.has(s.snapshotId),
  );
  const oldestMainOnlyAt = oldestAt(mainOnly);
  const oldestUnreferencedAt = oldestAt(unreferenced);
  return {
    mainOnly: mainOnly.length,
    ...(oldestMainOnlyAt === undefined ? {} : { oldestMainOnlyAt }),
    unreferenced: unreferenced.length,
    ...(oldestUnreferencedAt === undefined ? {} : { oldestUnreferencedAt }),
  };
}

function summaryInt(snapshot: Snapshot, key: string): number | undefined {
  const value = snapshot.summary[key];
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * Data added by one snapshot: its summary when that says it exactly (`added-files-size`
 * also counts delete files, so only when it added none), else the live data files that
 * snapshot added, from the manifests.
 */
function addedBy(snapshot: Snapshot, totals: ManifestAggregate): AddedFigures {
  const files = summaryInt(snapshot, SUMMARY.addedDataFiles);
  const bytes = summaryInt(snapshot, SUMMARY.addedFilesSize);
  const records = summaryInt(snapshot, SUMMARY.addedRecords);
  const deletes = summaryInt(snapshot, SUMMARY.addedDeleteFiles) ?? 0;
  if (files === 0) return { files: 0, bytes: 0, records: 0 };
  if (files !== undefined && bytes !== undefined && records !== undefined && deletes === 0) {
    return { files, bytes, records };
  }
  return totals.addedBySnapshot.get(snapshot.snapshotId) ?? { files: 0, bytes: 0, records: 0 };
}

function newData(metadata: TableMetadataModel, totals: ManifestAggregate): TableState['newData'] {
  const { since, snapshots } = snapshotsSinceLast(metadata, SnapshotOperation.replace);
  if (since === null) {
    // Never rewritten (or its last rewrite has been expired): all data is new.
    return {
      sinceSnapshotId: null,
      files: totals.dataFiles,
      records: totals.records,
      bytes: totals.dataBytes,
      share: totals.dataBytes > 0 ? 1 : 0,
    };
  }
  const added = { files: 0, bytes: 0, records: 0 };
  for (const snapshot of snapshots) {
    const a = addedBy(snapshot, totals);
    added.files += a.files;
    added.bytes += a.bytes;
    added.records += a.records;
  }
  return {
    sinceSnapshotId: since.snapshotId,
    sinceSequenceNumber: since.sequenceNumber,
    ...added,
    share: totals.dataBytes > 0 ? Math.min(1, added.bytes / totals.dataBytes) : 0,
  };
}

function refStates(metadata: TableMetadataModel): RefState[] {
  return [...metadata.refs.values()]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((r) => ({
      name: r.name,
      type: r.type,
      snapshotId: r.snapshotId,
      ...(r.maxRefAgeMs === undefined ? {} : { maxRefAgeMs: r.maxRefAgeMs }),
      ...(r.maxSnapshotAgeMs === undefined ? {} : { maxSnapshotAgeMs: r.maxSnapshotAgeMs }),
      ...(r.minSnapshotsToKeep === undefined ? {} : { minSnapshotsToKeep: r.minSnapshotsToKeep }),
    }));
}

/**
 * The partitions the state lists — bounded, so a table with 100,000 partitions stays a small
 * message: the `max` that need work most (most small files, then delete files, then files,
 * then bytes), each with its last change; the totals over all; and the specs of listed
 * partitions other than the current one.
 */
function partitionFigures(
  metadata: TableMetadataModel,
  partitions: ReadonlyMap<string, PartitionFigures>,
  max: number,
): Pick<TableState, 'partitions' | 'partitionTotals' | 'otherPartitionSpecs'> {
  const all = [...partitions.entries()];
  const listed = all
    .sort(
      ([ka, a], [kb, b]) =>
        b.smallFiles - a.smallFiles ||
        b.deleteFiles - a.deleteFiles ||
        b.dataFiles - a.dataFiles ||
        b.bytes - a.bytes ||
        (ka < kb ? -1 : ka > kb ? 1 : 0),
    )
    .slice(0, max)
    .map(([, p]) => p);
  // Sequence number → commit time, for the snapshots still in the metadata.
  const committed = new Map<string, number>();
  for (const s of metadata.snapshots) committed.set(s.sequenceNumber, s.timestampMs);
  const states: PartitionState[] = listed.map((p) => {
    const sequence = p.lastSequence?.toString();
    const at = sequence === undefined ? undefined : committed.get(sequence);
    return {
      specId: p.specId,
      partition: p.partition,
      dataFiles: p.dataFiles,
      smallFiles: p.smallFiles,
      deleteFiles: p.deleteFiles,
      bytes: p.bytes,
      smallFileBytes: p.smallFileBytes,
      deleteFileBytes: p.deleteFileBytes,
      ...(sequence === undefined ? {} : { lastSequenceNumber: sequence }),
      ...(at === undefined ? {} : { lastChangedAt: new Date(at).toISOString() }),
    };
  });
  const otherSpecIds = [...new Set(listed.map((p) => p.specId))]
    .filter((id) => id !== metadata.defaultSpecId)
    .sort((a, b) => a - b);
  return {
    partitions: states,
    partitionTotals: {
      partitions: all.length,
      needingWork: all.filter(([, p]) => p.smallFiles + p.deleteFiles > 0).length,
      listed: states.length,
    },
    ...(otherSpecIds.length === 0
      ? {}
      : { otherPartitionSpecs: otherSpecIds.map((id) => partitionSpecState(metadata, id)) }),
  };
}
