import type { FileIO } from '../io/file-io.ts';
import type { Snapshot } from '../metadata/table-model.ts';
import type { ManifestCache } from './manifest-cache.ts';
import type { ManifestEntry, ManifestFile } from './manifest-file.ts';
import { decodeManifestList } from './manifest-list-reader.ts';
import { scanManifest, type EntryView } from './entry-scanner.ts';
import { toManifestEntry } from './manifest-reader.ts';
import { IcebergError, IcebergErrorKind } from '../errors/iceberg-error.ts';

/** A rough heap estimate: object overhead plus UTF-16 strings. */
function manifestFileBytes(m: ManifestFile): number {
  return 200 + 2 * m.path.length;
}

function entryBytes(e: ManifestEntry): number {
  let bytes = 240 + 2 * (e.filePath.length + (e.referencedDataFile?.length ?? 0));
  for (const key of Object.keys(e.partition)) bytes += 48 + 2 * key.length;
  return bytes;
}

/** The manifests of a snapshot (its manifest list, or v1's inline list), cached by path. */
export async function readSnapshotManifests(
  io: FileIO,
  snapshot: Snapshot,
  cache: ManifestCache,
  signal?: AbortSignal,
): Promise<readonly ManifestFile[]> {
  const path = snapshot.manifestList;
  if (path === null) {
    // Old v1 snapshots list manifest paths inline, without counts or sequence numbers.
    throw new IcebergError(
      IcebergErrorKind.unsupported,
      `snapshot ${snapshot.snapshotId} lists manifests inline (v1 without a manifest list)`,
    );
  }
  const hit = cache.get<readonly ManifestFile[]>('list', path);
  if (hit !== undefined) return hit;
  const bytes = await io.read(path, signal);
  cache.stats.manifestListsRead++;
  cache.stats.bytesRead += bytes.byteLength;
  const manifests = decodeManifestList(bytes, path, snapshot.snapshotId);
  cache.set(
    'list',
    path,
    manifests,
    manifests.reduce((n, m) => n + manifestFileBytes(m), 64),
  );
  return manifests;
}

/** All entries of a manifest (live and deleted), inherited values applied; cached by path. */
export async function readManifestEntries(
  io: FileIO,
  manifest: ManifestFile,
  cache: ManifestCache,
  signal?: AbortSignal,
): Promise<readonly ManifestEntry[]> {
  const hit = cache.get<readonly ManifestEntry[]>('entries', manifest.path);
  if (hit !== undefined) return hit;
  const entries: ManifestEntry[] = [];
  let bytes = 64;
  await visitManifest(
    io,
    manifest,
    cache,
    (view) => {
      const e = toManifestEntry(view);
      entries.push(e);
      bytes += entryBytes(e);
    },
    signal,
  );
  cache.set('entries', manifest.path, entries, bytes);
  return entries;
}

/** Something computed from all entries of one manifest, with its estimated size. */
export interface ManifestDerivation<T> {
  /** Called with the scanner's reused view: copy what outlives the call. */
  visit(entry: EntryView): void;
  finish(): { value: T; bytes: number };
}

/**
 * A value derived from one manifest (e.g. its health aggregate), cached under `kind` by the
 * manifest's path: a manifest seen before is not read again.
 */
export async function deriveFromManifest<T>(
  io: FileIO,
  manifest: ManifestFile,
  cache: ManifestCache,
  kind: string,
  derive: () => ManifestDerivation<T>,
  signal?: AbortSignal,
): Promise<T> {
  const hit = cache.get<T>(kind, manifest.path);
  if (hit !== undefined) return hit;
  const derivation = derive();
  await visitManifest(io, manifest, cache, (e) => derivation.visit(e), signal);
  const { value, bytes } = derivation.finish();
  cache.set(kind, manifest.path, value, bytes);
  return value;
}

async function visitManifest(
  io: FileIO,
  manifest: ManifestFile,
  cache: ManifestCache,
  onEntry: (entry: EntryView) => void,
  signal?: AbortSignal,
): Promise<void> {
  const bytes = await io.read(manifest.path, signal);
  cache.stats.manifestsRead++;
  cache.stats.bytesRead += bytes.byteLength;
  const { entries } = scanManifest(bytes, manifest, onEntry);
  cache.stats.entriesDecoded += entries;
}
