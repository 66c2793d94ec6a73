import { FileContent, isDeletionVector, type ManifestEntry } from '../manifest/manifest-file.ts';
import type { ManifestDerivation } from '../manifest/read-manifests.ts';
import { DeleteKind, pathHash, type DeleteFacts } from './dangling-deletes.ts';
import { primitiveText } from './partition-text.ts';
import { SIZE_HISTOGRAM_BOUNDS, bucketIndex } from './size-histogram.ts';

/** Live figures of one partition (within one manifest, or summed over the table). */
export interface PartitionFigures {
  readonly specId: number;
  readonly partition: Record<string, string | null>;
  dataFiles: number;
  smallFiles: number;
  deleteFiles: number;
  bytes: number;
}

export interface AddedFigures {
  files: number;
  bytes: number;
  records: number;
}

/**
 * What one manifest contributes to a table's health: live entries only (status 0/1), summed.
 * Every live file is listed as live in exactly one manifest of a snapshot, so the table's
 * figures are the sum of its manifests' aggregates.
 */
export interface ManifestAggregate {
  dataFiles: number;
  dataBytes: number;
  records: number;
  smallFiles: number;
  smallFileBytes: number;
  positionDeleteFiles: number;
  equalityDeleteFiles: number;
  deletionVectors: number;
  /** Position and equality delete files; puffin files are in `puffinFiles`, counted once each. */
  deleteFileBytes: number;
  positionDeleteRecords: number;
  equalityDeleteRecords: number;
  /** Puffin file → its size: several DVs share one file. */
  readonly puffinFiles: Map<string, number>;
  readonly histogramFiles: number[];
  readonly histogramBytes: number[];
  /** Partition key → figures. */
  readonly partitions: Map<string, PartitionFigures>;
  /** Live data files by the snapshot that added them: new data when summaries do not suffice. */
  readonly addedBySnapshot: Map<string, AddedFigures>;
  /** Partition key → the smallest data sequence number of its live data files. */
  readonly dataMinSequence: Map<string, bigint>;
  /** `pathHash` of every live data file's path. */
  readonly dataPathHashes: number[];
  /** Every live delete file, for the dangling-delete rule. */
  readonly deletes: DeleteFacts[];
}

export function emptyAggregate(): ManifestAggregate {
  return {
    dataFiles: 0,
    dataBytes: 0,
    records: 0,
    smallFiles: 0,
    smallFileBytes: 0,
    positionDeleteFiles: 0,
    equalityDeleteFiles: 0,
    deletionVectors: 0,
    deleteFileBytes: 0,
    positionDeleteRecords: 0,
    equalityDeleteRecords: 0,
    puffinFiles: new Map(),
    histogramFiles: new Array<number>(SIZE_HISTOGRAM_BOUNDS.length + 1).fill(0),
    histogramBytes: new Array<number>(SIZE_HISTOGRAM_BOUNDS.length + 1).fill(0),
    partitions: new Map(),
    addedBySnapshot: new Map(),
    dataMinSequence: new Map(),
    dataPathHashes: [],
    deletes: [],
  };
}

export interface AggregateContext {
  readonly specId: number;
  /** The spec has no partition fields (its equality deletes are global). */
  readonly unpartitionedSpec: boolean;
  readonly smallFileThresholdBytes: number;
  /** Renders a decoded partition tuple as field name → text. */
  readonly renderPartition: (
    partition: Readonly<Record<string, unknown>>,
  ) => Record<string, string | null>;
}

// Values are Avro primitives (number, exact-long string, boolean, string) or bytes.
function rawText(value: unknown): string {
  if (value === null || value === undefined) return '\u0002';
  if (value instanceof Uint8Array) return `${Buffer.from(value).toString('hex')}\u0001`;
  return `${primitiveText(value)}\u0001`;
}

/** Builds the aggregate of one manifest entry by entry. */
export function aggregateManifest(
  context: AggregateContext,
): ManifestDerivation<ManifestAggregate> {
  const agg = emptyAggregate();
  const threshold = context.smallFileThresholdBytes;
  // Rendering is the costly part per entry; entries of one partition share the raw tuple shape.
  const partitionKeys = new Map<string, string>();
  const partitionOf = (entry: ManifestEntry): { key: string; figures: PartitionFigures } => {
    const raw = entry.partition;
    let rawKey = '';
    for (const value of Object.values(raw)) rawKey += rawText(value);
    let key = partitionKeys.get(rawKey);
    let figures = key === undefined ? undefined : agg.partitions.get(key);
    if (figures === undefined) {
      const partition = context.renderPartition(raw);
      key = `${context.specId}\u0000${JSON.stringify(partition)}`;
      partitionKeys.set(rawKey, key);
      figures = agg.partitions.get(key);
      if (figures === undefined) {
        figures = {
          specId: context.specId,
          partition,
          dataFiles: 0,
          smallFiles: 0,
          deleteFiles: 0,
          bytes: 0,
        };
        agg.partitions.set(key, figures);
      }
    }
    return { key: key!, figures };
  };
  const deleteFacts = (entry: ManifestEntry, kind: DeleteKind, partitionKey: string): void => {
    agg.deletes.push({
      kind,
      partitionKey,
      unpartitionedSpec: context.unpartitionedSpec,
      sequenceNumber: BigInt(entry.sequenceNumber),
      referencedPathHash:
        entry.referencedDataFile === null ? null : pathHash(entry.referencedDataFile),
    });
  };

  return {
    visit(entry) {
      if (entry.status === 2) return;
      const size = entry.fileSizeInBytes;
      const { key, figures: part } = partitionOf(entry);
      switch (entry.content) {
        case FileContent.data: {
          const seq = BigInt(entry.sequenceNumber);
          const min = agg.dataMinSequence.get(key);
          if (min === undefined || seq < min) agg.dataMinSequence.set(key, seq);
          agg.dataPathHashes.push(pathHash(entry.filePath));
          agg.dataFiles++;
          agg.dataBytes += size;
          agg.records += entry.recordCount;
          part.dataFiles++;
          part.bytes += size;
          if (size < threshold) {
            agg.smallFiles++;
            agg.smallFileBytes += size;
            part.smallFiles++;
          }
          const b = bucketIndex(size);
          agg.histogramFiles[b]!++;
          agg.histogramBytes[b]! += size;
          let added = agg.addedBySnapshot.get(entry.snapshotId);
          if (added === undefined) {
            added = { files: 0, bytes: 0, records: 0 };
            agg.addedBySnapshot.set(entry.snapshotId, added);
          }
          added.files++;
          added.bytes += size;
          added.records += entry.recordCount;
          return;
        }
        case FileContent.positionDeletes:
          part.deleteFiles++;
          agg.positionDeleteRecords += entry.recordCount;
          if (isDeletionVector(entry)) {
            agg.deletionVectors++;
            agg.puffinFiles.set(entry.filePath, size);
            deleteFacts(entry, DeleteKind.vector, key);
          } else {
            agg.positionDeleteFiles++;
            agg.deleteFileBytes += size;
            deleteFacts(entry, DeleteKind.position, key);
          }
          return;
        case FileContent.equalityDeletes:
          part.deleteFiles++;
          agg.equalityDeleteFiles++;
          agg.deleteFileBytes += size;
          agg.equalityDeleteRecords += entry.recordCount;
          deleteFacts(entry, DeleteKind.equality, key);
          return;
      }
    },
    finish() {
      let bytes = 400 + 160 * agg.addedBySnapshot.size;
      bytes += 8 * agg.dataPathHashes.length + 120 * agg.deletes.length;
      for (const key of agg.dataMinSequence.keys()) bytes += 80 + 2 * key.length;
      for (const path of agg.puffinFiles.keys()) bytes += 64 + 2 * path.length;
      for (const [key, p] of agg.partitions)
        bytes += 160 + 4 * key.length + 48 * Object.keys(p.partition).length;
      return { value: agg, bytes };
    },
  };
}

/** Adds `from` into `into` (table totals from manifest aggregates). */
export function addAggregate(into: ManifestAggregate, from: ManifestAggregate): void {
  into.dataFiles += from.dataFiles;
  into.dataBytes += from.dataBytes;
  into.records += from.records;
  into.smallFiles += from.smallFiles;
  into.smallFileBytes += from.smallFileBytes;
  into.positionDeleteFiles += from.positionDeleteFiles;
  into.equalityDeleteFiles += from.equalityDeleteFiles;
  into.deletionVectors += from.deletionVectors;
  into.deleteFileBytes += from.deleteFileBytes;
  into.positionDeleteRecords += from.positionDeleteRecords;
  into.equalityDeleteRecords += from.equalityDeleteRecords;
  for (const [path, size] of from.puffinFiles) into.puffinFiles.set(path, size);
  for (let i = 0; i < from.histogramFiles.length; i++) {
    into.histogramFiles[i]! += from.histogramFiles[i]!;
    into.histogramBytes[i]! += from.histogramBytes[i]!;
  }
  for (const [key, p] of from.partitions) {
    const t = into.partitions.get(key);
    if (t === undefined) {
      into.partitions.set(key, { ...p });
    } else {
      t.dataFiles += p.dataFiles;
      t.smallFiles += p.smallFiles;
      t.deleteFiles += p.deleteFiles;
      t.bytes += p.bytes;
    }
  }
  for (const [key, seq] of from.dataMinSequence) {
    const min = into.dataMinSequence.get(key);
    if (min === undefined || seq < min) into.dataMinSequence.set(key, seq);
  }
  for (const hash of from.dataPathHashes) into.dataPathHashes.push(hash);
  for (const d of from.deletes) into.deletes.push(d);
  for (const [id, a] of from.addedBySnapshot) {
    const t = into.addedBySnapshot.get(id);
    if (t === undefined) into.addedBySnapshot.set(id, { ...a });
    else {
      t.files += a.files;
      t.bytes += a.bytes;
      t.records += a.records;
    }
  }
}
