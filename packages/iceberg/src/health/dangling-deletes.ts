/**
 * Which delete files of a snapshot still apply to a live data file. The rule is the Iceberg
 * spec's "must be applied" conditions (format/spec.md, "Scan Planning"), decided on manifest
 * metadata only; docs/iceberg.md#dangling-delete-files explains it.
 *
 * Pure: the manifest aggregates collect the facts, `countDanglingDeletes` decides.
 */

/** What a delete file is, as far as the rule cares. */
export const DeleteKind = {
  /** A Parquet/Avro/ORC position-delete file (content 1). */
  position: 'position',
  /** A deletion vector (content 1 in a puffin file, format v3). */
  vector: 'vector',
  /** An equality-delete file (content 2). */
  equality: 'equality',
} as const;
export type DeleteKind = (typeof DeleteKind)[keyof typeof DeleteKind];

/** One live delete-file entry of a snapshot. */
export interface DeleteFacts {
  readonly kind: DeleteKind;
  /** Spec id and partition values (the key health groups partitions by). */
  readonly partitionKey: string;
  /** Its partition spec has no fields: an equality delete then applies to every partition. */
  readonly unpartitionedSpec: boolean;
  /** Data sequence number. */
  readonly sequenceNumber: bigint;
  /** `pathHash` of `referenced_data_file`, when the file names one. */
  readonly referencedPathHash: number | null;
}

/** The live data files of a snapshot, as far as the rule cares. */
export interface DataFacts {
  /** Partition key → the smallest data sequence number of its live data files. */
  readonly minSequenceByPartition: ReadonlyMap<string, bigint>;
  /** Membership of a live data file's path, by `pathHash`. */
  readonly hasPath: (hash: number) => boolean;
}

export interface DanglingDeleteCounts {
  positionDeleteFiles: number;
  equalityDeleteFiles: number;
  deletionVectors: number;
}

/**
 * A 53-bit hash of a file path's UTF-8 bytes. Paths are compared by hash to keep the cached
 * per-manifest figures small; a collision (≈ files² / 2⁵³) can only make a dangling delete
 * count as live, never the other way round.
 */
export function pathHash(path: string): number {
  const bytes = Buffer.from(path, 'utf8');
  return pathHashOfUtf8(bytes, 0, bytes.length);
}

/**
 * `pathHash` of the UTF-8 path in `bytes[start, end)`, without making a string (manifests
 * hold paths as UTF-8). Two multiply-rotate lanes over 4-byte words, cyrb53's final mix.
 */
export function pathHashOfUtf8(bytes: Uint8Array, start: number, end: number): number {
  let h1 = 0xdeadbeef ^ (end - start);
  let h2 = 0x41c6ce57 ^ (end - start);
  let i = start;
  for (; i + 4 <= end; i += 4) {
    const w = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    h1 = Math.imul(h1 ^ w, 2654435761);
    h1 = (h1 << 13) | (h1 >>> 19);
    h2 = Math.imul(h2 ^ w, 1597334677);
    h2 = (h2 << 17) | (h2 >>> 15);
  }
  for (; i < end; i++) {
    const ch = bytes[i]!;
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/**
 * Counts the delete files that apply to no live data file. Per the spec, a data file D is
 * subject to a delete file F when:
 * - deletion vector: D's path is F's `referenced_data_file` (D's sequence number ≤ F's and
 *   its partition equal follow: a file's path names one file, written before its deletes);
 * - position deletes: D's path is F's `referenced_data_file` when F names one; D's data
 *   sequence number ≤ F's; same spec and partition values; and D has no deletion vector
 *   (a DV carries every position delete of its file);
 * - equality deletes: D's data sequence number < F's; same spec and partition values, or any
 *   partition when F's spec is unpartitioned (a global delete).
 * F is dangling when no live D is subject to it. Position-delete files that name no data file
 * are judged by partition and sequence number only (which files their rows name is in the
 * file, not the manifest), as Iceberg's own `RemoveDanglingDeleteFiles` does.
 */
export function countDanglingDeletes(
  deletes: Iterable<DeleteFacts>,
  data: DataFacts,
): DanglingDeleteCounts {
  const counts: DanglingDeleteCounts = {
    positionDeleteFiles: 0,
    equalityDeleteFiles: 0,
    deletionVectors: 0,
  };
  const all = [...deletes];
  const withVector = new Set<number>();
  for (const d of all) {
    if (d.kind === DeleteKind.vector && d.referencedPathHash !== null) {
      withVector.add(d.referencedPathHash);
    }
  }
  let tableMin: bigint | null = null;
  for (const seq of data.minSequenceByPartition.values()) {
    if (tableMin === null || seq < tableMin) tableMin = seq;
  }
  for (const d of all) {
    const partitionMin = data.minSequenceByPartition.get(d.partitionKey);
    switch (d.kind) {
      case DeleteKind.vector:
        if (d.referencedPathHash === null || !data.hasPath(d.referencedPathHash)) {
          counts.deletionVectors++;
        }
        break;
      case DeleteKind.position: {
        const applies =
          d.referencedPathHash === null
            ? partitionMin !== undefined && partitionMin <= d.sequenceNumber
            : data.hasPath(d.referencedPathHash) && !withVector.has(d.referencedPathHash);
        if (!applies) counts.positionDeleteFiles++;
        break;
      }
      case DeleteKind.equality: {
        const min = d.unpartitionedSpec ? tableMin : (partitionMin ?? null);
        if (min === null || min >= d.sequenceNumber) counts.equalityDeleteFiles++;
        break;
      }
    }
  }
  return counts;
}
