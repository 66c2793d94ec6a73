import type { EntryView } from '../manifest/entry-scanner.ts';
import type { ExactLong } from '../manifest/exact-long.ts';
import { EntryStatus, FileContent } from '../manifest/manifest-file.ts';
import type { ManifestDerivation } from '../manifest/read-manifests.ts';
import { DeleteKind, pathHashOfUtf8, type DeleteFacts } from './dangling-deletes.ts';
import { SIZE_HISTOGRAM_BOUNDS, bucketIndex } from './size-histogram.ts';

/** Live figures of one partition (within one manifest, or summed over the table). */
export interface PartitionFigures {
  readonly specId: number;
  readonly partition: Record<string, string | null>;
  dataFiles: number;
  smallFiles: number;
  deleteFiles: number;
  bytes: number;
  smallFileBytes: number;
  /** Position and equality delete files' bytes (deletion vectors share puffin files: not counted). */
  deleteFileBytes: number;
  /** The largest data sequence number of its live files (data and delete): its last change. */
  lastSequence: bigint | undefined;
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

/** The raw partition bytes of entries seen, with what they render to. */
interface PartitionSlot {
  readonly bytes: Uint8Array;
  readonly key: string;
  readonly figures: PartitionFigures;
  /** Smallest data sequence number of its live data files (exact). */
  minSequence: ExactLong | undefined;
  /** Largest data sequence number of its live files, data or delete (exact). */
  maxSequence: ExactLong | undefined;
}

function lessThan(a: ExactLong, b: ExactLong): boolean {
  return typeof a === 'number' && typeof b === 'number' ? a < b : BigInt(a) < BigInt(b);
}

/** FNV-1a over the partition tuple's Avro bytes, kept a small integer (a cheap map key). */
function bytesHash(buf: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i]!, 16777619);
  return h & 0x3fffffff;
}

function sameBytes(a: Uint8Array, buf: Uint8Array, start: number, end: number): boolean {
  if (a.length !== end - start) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== buf[start + i]) return false;
  return true;
}

/**
 * Builds the aggregate of one manifest entry by entry, from the scanner's reused view: no
 * object or string per entry (paths are hashed from their bytes; partition tuples are keyed
 * by their Avro bytes and rendered once per distinct tuple).
 */
export function aggregateManifest(
  context: AggregateContext,
): ManifestDerivation<ManifestAggregate> {
  const agg = emptyAggregate();
  const threshold = context.smallFileThresholdBytes;
  const slots = new Map<number, PartitionSlot[]>();
  let lastSnapshot = '';
  let lastAdded: AddedFigures | undefined;
  const allSlots: PartitionSlot[] = [];
  const partitionOf = (entry: EntryView): PartitionSlot => {
    const buf = entry.buf;
    const start = entry.partitionStart;
    const end = entry.partitionEnd;
    const hash = bytesHash(buf, start, end);
    let list = slots.get(hash);
    if (list !== undefined) {
      for (const slot of list) if (sameBytes(slot.bytes, buf, start, end)) return slot;
    } else {
      list = [];
      slots.set(hash, list);
    }
    // Different bytes may render alike (e.g. a non-minimal varint): one figure per rendering.
    const partition = context.renderPartition(entry.partition());
    const key = `${context.specId}\u0000${JSON.stringify(partition)}`;
    let figures = agg.partitions.get(key);
    if (figures === undefined) {
      figures = {
        specId: context.specId,
        partition,
        dataFiles: 0,
        smallFiles: 0,
        deleteFiles: 0,
        bytes: 0,
        smallFileBytes: 0,
        deleteFileBytes: 0,
        lastSequence: undefined,
      };
      agg.partitions.set(key, figures);
    }
    const slot: PartitionSlot = {
      bytes: buf.slice(start, end),
      key,
      figures,
      minSequence: undefined,
      maxSequence: undefined,
    };
    list.push(slot);
    allSlots.push(slot);
    return slot;
  };
  const deleteFacts = (entry: EntryView, kind: DeleteKind, partitionKey: string): void => {
    const ref = entry.referencedRange();
    agg.deletes.push({
      kind,
      partitionKey,
      unpartitionedSpec: context.unpartitionedSpec,
      sequenceNumber: BigInt(entry.sequenceNumber),
      referencedPathHash: ref === null ? null : pathHashOfUtf8(entry.buf, ref[0], ref[1]),
    });
  };

  return {
    visit(entry) {
      if (entry.status === EntryStatus.deleted) return;
      const size = entry.fileSizeInBytes;
      const slot = partitionOf(entry);
      const part = slot.figures;
      const sequence = entry.sequenceNumber;
      if (slot.maxSequence === undefined || lessThan(slot.maxSequence, sequence))
        slot.maxSequence = sequence;
      switch (entry.content) {
        case FileContent.data: {
          const seq = entry.sequenceNumber;
          if (slot.minSequence === undefined || lessThan(seq, slot.minSequence))
            slot.minSequence = seq;
          agg.dataPathHashes.push(pathHashOfUtf8(entry.buf, entry.pathStart, entry.pathEnd));
          agg.dataFiles++;
          agg.dataBytes += size;
          agg.records += entry.recordCount;
          part.dataFiles++;
          part.bytes += size;
          if (size < threshold) {
            agg.smallFiles++;
            agg.smallFileBytes += size;
            part.smallFiles++;
            part.smallFileBytes += size;
          }
          const b = bucketIndex(size);
          agg.histogramFiles[b]!++;
          agg.histogramBytes[b]! += size;
          // Entries of a manifest mostly share one snapshot: look it up when it changes.
          let added = entry.snapshotId === lastSnapshot ? lastAdded : undefined;
          if (added === undefined) {
            added = agg.addedBySnapshot.get(entry.snapshotId);
            if (added === undefined) {
              added = { files: 0, bytes: 0, records: 0 };
              agg.addedBySnapshot.set(entry.snapshotId, added);
            }
            lastSnapshot = entry.snapshotId;
            lastAdded = added;
          }
          added.files++;
          added.bytes += size;
          added.records += entry.recordCount;
          return;
        }
        case FileContent.positionDeletes:
          part.deleteFiles++;
          agg.positionDeleteRecords += entry.recordCount;
          if (entry.isDeletionVector()) {
            agg.deletionVectors++;
            agg.puffinFiles.set(entry.filePath(), size);
            deleteFacts(entry, DeleteKind.vector, slot.key);
          } else {
            agg.positionDeleteFiles++;
            agg.deleteFileBytes += size;
            part.deleteFileBytes += size;
            deleteFacts(entry, DeleteKind.position, slot.key);
          }
          return;
        case FileContent.equalityDeletes:
          part.deleteFiles++;
          agg.equalityDeleteFiles++;
          agg.deleteFileBytes += size;
          part.deleteFileBytes += size;
          agg.equalityDeleteRecords += entry.recordCount;
          deleteFacts(entry, DeleteKind.equality, slot.key);
          return;
      }
    },
    finish() {
      for (const slot of allSlots) {
        if (slot.maxSequence !== undefined) {
          const last = BigInt(slot.maxSequence);
          const f = slot.figures;
          if (f.lastSequence === undefined || f.lastSequence < last) f.lastSequence = last;
        }
        if (slot.minSequence === undefined) continue;
        const seq = BigInt(slot.minSequence);
        const min = agg.dataMinSequence.get(slot.key);
        if (min === undefined || seq < min) agg.dataMinSequence.set(slot.key, seq);
      }
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
      t.smallFileBytes += p.smallFileBytes;
      t.deleteFileBytes += p.deleteFileBytes;
      if (
        p.lastSequence !== undefined &&
        (t.lastSequence === undefined || t.lastSequence < p.lastSequence)
      )
        t.lastSequence = p.lastSequence;
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
