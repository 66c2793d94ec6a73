import type { Snapshot, SnapshotOperation, TableMetadataModel } from './table-model.ts';

/**
 * The ancestry of a snapshot, newest first: the snapshot, its parent, and so on until a
 * parent is missing (expired) or there is none. Defaults to the current snapshot (main).
 */
export function snapshotAncestry(
  table: TableMetadataModel,
  fromSnapshotId: string | null = table.currentSnapshotId,
): Snapshot[] {
  const out: Snapshot[] = [];
  const seen = new Set<string>();
  let id = fromSnapshotId;
  while (id !== null && !seen.has(id)) {
    const snapshot = table.snapshotsById.get(id);
    if (snapshot === undefined) break;
    seen.add(id);
    out.push(snapshot);
    id = snapshot.parentSnapshotId;
  }
  return out;
}

export interface SnapshotsSince {
  /** The newest ancestor with the operation; null when the ancestry has none. */
  readonly since: Snapshot | null;
  /** Ancestors committed after it, oldest first (all ancestors when `since` is null). */
  readonly snapshots: readonly Snapshot[];
}

/**
 * Snapshots of the current snapshot's ancestry committed after the last snapshot with the
 * given operation, e.g. everything since the last `replace` (rewrite).
 */
export function snapshotsSinceLast(
  table: TableMetadataModel,
  operation: SnapshotOperation,
  fromSnapshotId: string | null = table.currentSnapshotId,
): SnapshotsSince {
  const ancestry = snapshotAncestry(table, fromSnapshotId);
  const index = ancestry.findIndex((s) => s.operation === operation);
  const newer = index === -1 ? ancestry : ancestry.slice(0, index);
  return { since: index === -1 ? null : (ancestry[index] ?? null), snapshots: newer.reverse() };
}

export function currentSnapshot(table: TableMetadataModel): Snapshot | null {
  return table.currentSnapshotId === null
    ? null
    : (table.snapshotsById.get(table.currentSnapshotId) ?? null);
}
