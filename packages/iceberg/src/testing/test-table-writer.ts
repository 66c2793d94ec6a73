import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringifyJson } from '@icepack/types';
import {
  encodeManifest,
  encodeManifestList,
  type TestManifest,
  type TestManifestListEntry,
  type TestPartitionField,
} from './manifest-writer.ts';

export interface TestTableOptions {
  readonly formatVersion: 2 | 3;
  readonly partitionFields?: readonly TestPartitionField[];
  readonly properties?: Readonly<Record<string, string>>;
  /** Sort order fields by source id (`asc nulls-first`). Default: unsorted. */
  readonly sortSourceIds?: readonly number[];
}

export interface TestCommit {
  readonly operation: 'append' | 'replace' | 'overwrite' | 'delete';
  readonly summary?: Readonly<Record<string, string>>;
  /** Manifests written by this commit (their entries inherit the new snapshot id and sequence number). */
  readonly newManifests: readonly Omit<TestManifest, 'formatVersion'>[];
  /** Manifests of the previous snapshot to keep (default: all of them). */
  readonly keep?: (manifest: TestManifestListEntry) => boolean;
  readonly timestampMs?: number;
}

/**
 * Writes a real Iceberg table layout (metadata JSON, manifest lists, manifests) under a
 * directory, one commit at a time — for tests and benchmarks that need no Spark.
 */
export class TestTableWriter {
  readonly dir: string;
  readonly options: TestTableOptions;
  readonly #snapshots: Record<string, unknown>[] = [];
  #manifests: TestManifestListEntry[] = [];
  #sequence = 0;
  #version = 0;
  #files = 0;
  #currentSnapshotId: bigint | null = null;
  /** Bytes of every manifest file written, by path (tests corrupt them). */
  readonly manifestPaths: string[] = [];

  constructor(dir: string, options: TestTableOptions) {
    this.dir = dir;
    this.options = options;
  }

  /** Snapshot ids above 2^53, as Iceberg's random 63-bit ids are. */
  static snapshotIdFor(sequence: number): string {
    return (7_000_000_000_000_000_000n + BigInt(sequence) * 1_000_003n).toString();
  }

  /** Commits one snapshot; returns the new metadata.json path. */
  async commit(commit: TestCommit): Promise<string> {
    await mkdir(join(this.dir, 'metadata'), { recursive: true });
    this.#sequence++;
    const sequence = this.#sequence;
    const snapshotId = TestTableWriter.snapshotIdFor(sequence);
    const kept = this.#manifests.filter(commit.keep ?? (() => true));
    const written: TestManifestListEntry[] = [];
    for (const manifest of commit.newManifests) {
      const bytes = encodeManifest({
        partitionFields: this.options.partitionFields ?? [],
        ...manifest,
        formatVersion: this.options.formatVersion,
      });
      const path = join(this.dir, 'metadata', `m-${sequence}-${this.#files++}.avro`);
      await writeFile(path, bytes);
      this.manifestPaths.push(path);
      const live = manifest.entries.filter((e) => (e.status ?? 1) !== 2);
      written.push({
        path: `file:${path}`,
        length: bytes.length,
        specId: manifest.specId ?? 0,
        content: manifest.content === 'deletes' ? 1 : 0,
        sequenceNumber: String(sequence),
        addedSnapshotId: snapshotId,
        addedFiles: live.length,
        addedRows: live.reduce((n, e) => n + e.recordCount, 0),
      });
    }
    this.#manifests = [...written, ...kept];
    const listPath = join(this.dir, 'metadata', `snap-${snapshotId}.avro`);
    await writeFile(listPath, encodeManifestList(this.options.formatVersion, this.#manifests));
    const timestampMs = commit.timestampMs ?? 1_790_000_000_000 + sequence * 60_000;
    this.#snapshots.push({
      'snapshot-id': BigInt(snapshotId),
      ...(this.#currentSnapshotId === null
        ? {}
        : { 'parent-snapshot-id': this.#currentSnapshotId }),
      'sequence-number': sequence,
      'timestamp-ms': timestampMs,
      'manifest-list': `file:${listPath}`,
      summary: { operation: commit.operation, ...commit.summary },
      'schema-id': 0,
    });
    this.#currentSnapshotId = BigInt(snapshotId);
    return this.#writeMetadata(timestampMs);
  }

  async #writeMetadata(lastUpdatedMs: number): Promise<string> {
    const fields = this.options.partitionFields ?? [];
    const metadata = {
      'format-version': this.options.formatVersion,
      'table-uuid': '9c12d441-03fe-4693-9a96-a0705ddf69c1',
      location: `file:${this.dir}`,
      'last-sequence-number': this.#sequence,
      'last-updated-ms': lastUpdatedMs,
      'last-column-id': 3,
      'current-schema-id': 0,
      schemas: [
        {
          type: 'struct',
          'schema-id': 0,
          fields: [
            { id: 1, name: 'id', required: false, type: 'long' },
            { id: 2, name: 'day', required: false, type: 'date' },
            { id: 3, name: 'region', required: false, type: 'string' },
          ],
        },
      ],
      'default-spec-id': 0,
      'partition-specs': [
        {
          'spec-id': 0,
          fields: fields.map((f, i) => ({
            name: f.name,
            transform: f.transform ?? 'identity',
            'source-id': f.sourceId ?? i + 1,
            'field-id': f.fieldId ?? 1000 + i,
          })),
        },
      ],
      'last-partition-id': 999 + fields.length,
      'default-sort-order-id': this.options.sortSourceIds === undefined ? 0 : 1,
      'sort-orders': [
        { 'order-id': 0, fields: [] },
        ...(this.options.sortSourceIds === undefined
          ? []
          : [
              {
                'order-id': 1,
                fields: this.options.sortSourceIds.map((id) => ({
                  transform: 'identity',
                  'source-id': id,
                  direction: 'asc',
                  'null-order': 'nulls-first',
                })),
              },
            ]),
      ],
      properties: { ...this.options.properties },
      'current-snapshot-id': this.#currentSnapshotId,
      refs: { main: { 'snapshot-id': this.#currentSnapshotId, type: 'branch' } },
      snapshots: this.#snapshots,
      'snapshot-log': [],
      'metadata-log': [],
      ...(this.options.formatVersion === 3 ? { 'next-row-id': 0 } : {}),
    };
    const path = join(
      this.dir,
      'metadata',
      `${String(this.#version++).padStart(5, '0')}-test.metadata.json`,
    );
    await writeFile(path, stringifyJson(metadata, 2));
    return `file:${path}`;
  }
}
