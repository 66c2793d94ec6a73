import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { encodeManifest, encodeManifestList, TestTableWriter } from '@icepack/iceberg/testing';
import type { TestEntry, TestManifestListEntry } from '@icepack/iceberg/testing';
import { createNamespace } from '@icepack/metadata-scanner/testing';
import { inPool } from './bench-catalog.ts';
import { parseJsonExact, stringifyJson } from '@icepack/types';

// Tables with real Iceberg metadata, made without Spark: the catalog (Iceberg Java's REST
// server) creates each table and commits its snapshots, so metadata JSON, snapshot log and
// refs are Iceberg's own; the manifests and manifest lists it points at are written here
// with the project's Avro writers (what `table-health.ts` decodes), into the table's location
// (a local directory, or an S3 store: `WriteObject`).
// The scanner reads manifests, not data files: the data files named in them do not exist.

/** 50 data files over 3 append snapshots, partitioned by `region` (5 values). */
export const SNAPSHOT_FILES = [17, 17, 16] as const;
export const FILES_PER_TABLE = SNAPSHOT_FILES.reduce((a, b) => a + b, 0);
export const REGIONS = 5;

/** Sizes that make a real histogram: a third of the files under the 128 MiB default small-file line. */
export function fileSize(snapshot: number, i: number): number {
  const mib = i % 3 === 0 ? 4 + ((snapshot * 7 + i) % 60) : 130 + ((snapshot * 13 + i) % 200);
  return mib * 2 ** 20 + i;
}

/** Bytes of every data file of one generated table (what its TableState must report). */
export const BYTES_PER_TABLE = SNAPSHOT_FILES.flatMap((n, s) =>
  Array.from({ length: n }, (_, i) => fileSize(s + 1, i)),
).reduce((a, b) => a + b, 0);

const nsPath = (namespace: readonly string[]): string =>
  encodeURIComponent(namespace.join('\u001f'));

interface LoadedTable {
  readonly metadata: {
    readonly location: string;
    readonly snapshots?: readonly { 'snapshot-id': bigint | number }[];
  };
}

async function call(method: string, url: string, body?: unknown): Promise<Response> {
  return fetch(url, {
    method,
    headers: { 'content-type': 'application/json' },
    // Snapshot ids are 63-bit: written as exact JSON numbers, as Iceberg writes them.
    ...(body === undefined ? {} : { body: stringifyJson(body) }),
  });
}

async function ok(response: Response, what: string): Promise<LoadedTable> {
  const text = await response.text();
  if (!response.ok) throw new Error(`${what} → ${response.status}: ${text}`);
  return parseJsonExact(text) as LoadedTable;
}

/** Writes one generated file (manifest, manifest list) at its location. */
export type WriteObject = (location: string, bytes: Uint8Array) => Promise<void>;

/** `file:/a`, `file:///a`, `/a`: the catalog's warehouse is a local directory. */
export const writeLocalFile: WriteObject = async (location, bytes) => {
  const path = location.replace(/^file:(\/\/)?/, '');
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, bytes);
};

/** Creates the table (or loads it when an earlier run did) and commits its missing snapshots. */
async function ensureTable(
  uri: string,
  namespace: readonly string[],
  name: string,
  write: WriteObject,
): Promise<void> {
  const tables = `${uri}/v1/namespaces/${nsPath(namespace)}/tables`;
  let response = await call('POST', tables, {
    name,
    schema: {
      type: 'struct',
      'schema-id': 0,
      fields: [
        { id: 1, name: 'id', type: 'long', required: false },
        { id: 2, name: 'day', type: 'date', required: false },
        { id: 3, name: 'region', type: 'string', required: false },
      ],
    },
    'partition-spec': {
      'spec-id': 0,
      fields: [{ name: 'region', transform: 'identity', 'source-id': 3, 'field-id': 1000 }],
    },
    properties: { 'format-version': '2' },
  });
  if (response.status === 409) response = await call('GET', `${tables}/${name}`);
  const table = await ok(response, `create ${namespace.join('.')}.${name}`);
  const location = table.metadata.location.replace(/\/$/, '');
  const done = table.metadata.snapshots?.length ?? 0;
  const manifests: TestManifestListEntry[] = [];
  let parent: bigint | null = null;
  for (let s = 1; s <= SNAPSHOT_FILES.length; s++) {
    const snapshotId = TestTableWriter.snapshotIdFor(s);
    const entries: TestEntry[] = Array.from({ length: SNAPSHOT_FILES[s - 1]! }, (_, i) => ({
      path: `${location}/data/region=r${i % REGIONS}/${s}-${i}.parquet`,
      partition: { region: `r${i % REGIONS}` },
      recordCount: 1000 + i,
      sizeBytes: fileSize(s, i),
    }));
    const bytes = encodeManifest({
      formatVersion: 2,
      partitionFields: [{ name: 'region', type: 'string', sourceId: 3, fieldId: 1000 }],
      entries,
    });
    const manifest = `${location}/metadata/m${s}.avro`;
    manifests.unshift({
      path: manifest,
      length: bytes.length,
      sequenceNumber: String(s),
      addedSnapshotId: snapshotId,
      addedFiles: entries.length,
      addedRows: entries.reduce((n, e) => n + e.recordCount, 0),
    });
    if (s <= done) {
      parent = BigInt(snapshotId);
      continue;
    }
    const list = `${location}/metadata/snap-${snapshotId}.avro`;
    await write(manifest, bytes);
    await write(list, encodeManifestList(2, manifests));
    const id = BigInt(snapshotId);
    await ok(
      await call('POST', `${tables}/${name}`, {
        identifier: { namespace, name },
        requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': parent }],
        updates: [
          {
            action: 'add-snapshot',
            snapshot: {
              'snapshot-id': id,
              ...(parent === null ? {} : { 'parent-snapshot-id': parent }),
              'sequence-number': s,
              // After the table's creation: Iceberg refuses a snapshot older than the metadata log.
              'timestamp-ms': Date.now(),
              'manifest-list': list,
              summary: {
                operation: 'append',
                'added-data-files': String(entries.length),
                'total-data-files': String(SNAPSHOT_FILES.slice(0, s).reduce((a, b) => a + b, 0)),
              },
              'schema-id': 0,
            },
          },
          { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': id },
        ],
      }),
      `commit snapshot ${s} of ${namespace.join('.')}.${name}`,
    );
    parent = id;
  }
}

/**
 * `namespaces` × `perNamespace` tables under `bench.nsNNN`, each with 3 snapshots and 50
 * data files. A namespace finished by an earlier run has a marker in `stateDir` and is
 * skipped; an unfinished one is completed table by table. Returns the tables made or completed.
 */
export async function ensureManifestTables(
  uri: string,
  stateDir: string,
  namespaces: number,
  perNamespace: number,
  write: WriteObject = writeLocalFile,
  concurrency = 8,
): Promise<number> {
  const markers = join(stateDir, 'generated');
  await mkdir(markers, { recursive: true });
  let made = 0;
  for (let n = 0; n < namespaces; n++) {
    const ns = `ns${String(n).padStart(3, '0')}`;
    const marker = join(markers, `${ns}-${perNamespace}`);
    if (existsSync(marker)) continue;
    const namespace = ['bench', ns];
    await createNamespace(uri, namespace);
    await inPool(perNamespace, concurrency, async (name) => {
      await ensureTable(uri, namespace, name, write);
      made++;
    });
    await writeFile(marker, '');
  }
  return made;
}

/**
 * The generated catalog (SQLite file, warehouse, markers) kept on disk: `/dev/shm` is
 * fast but gone after a reboot, and generating 10 000 tables takes many minutes. Table
 * locations are absolute, so the archive is restored to the same directory.
 */
export function restoreCatalog(run: string, archive: string): boolean {
  if (existsSync(join(run, 'catalog', 'catalog.db')) || !existsSync(archive)) return false;
  tar(['-C', '/', '-xzf', archive]);
  return true;
}

export function archiveCatalog(run: string, archive: string): void {
  spawnSync('mkdir', ['-p', join(archive, '..')]);
  tar(['-C', '/', '-czf', archive, '--exclude=*.pid', '--exclude=logs', run.replace(/^\//, '')]);
}

function tar(args: string[]): void {
  const result = spawnSync('tar', args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`tar ${args.join(' ')} failed: ${result.stderr}`);
}
