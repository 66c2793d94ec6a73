// The maintenance rules of maintenance-rules.md as pure functions. "Above" is strictly
// greater (>): a table exactly at a threshold gets no task.
import type { TableState, TaskType } from '@icepack/types';
import type { Policy } from './policy.ts';

/** Where a task of a type is: waiting (also delayed) or active (running). */
export const PendingStatus = { waiting: 'waiting', active: 'active' } as const;
export type PendingStatus = (typeof PendingStatus)[keyof typeof PendingStatus];

export interface PendingTask {
  readonly status: PendingStatus;
  /** When the pending task was created (keeps its age and FIFO place across updates). */
  readonly createdAt?: string;
}
export type PendingTasks = Readonly<Partial<Record<TaskType, PendingTask>>>;

/** One factor a rule looked at, whether it met its condition, and the words for it. */
export interface Factor {
  /** `new-snapshots`, `snapshots`, `new-data`, `small-files`, `delete-files`, `sort-order`, `new-data-share`, `pending-…` */
  readonly factor: string;
  readonly value: number | string;
  /** The threshold the value must be above (strictly), when there is one. */
  readonly threshold?: number;
  readonly met: boolean;
  /** `80 small files > 20` or `12 small files ≤ 20 (not above)` */
  readonly text: string;
}

export interface RuleResult {
  readonly type: TaskType;
  /** All conditions hold: the rule creates a task. */
  readonly fires: boolean;
  /** The work conditions hold (ignoring the "no pending task" ones). */
  readonly needed: boolean;
  /** Every factor looked at, met or not. */
  readonly factors: readonly Factor[];
  /** Texts of the factors whose condition failed (why no task). */
  readonly blockers: readonly string[];
}

function above(factor: string, label: string, value: number, threshold: number): Factor {
  const met = value > threshold;
  return {
    factor,
    value,
    threshold,
    met,
    text: met ? `${value} ${label} > ${threshold}` : `${value} ${label} ≤ ${threshold} (not above)`,
  };
}

function exists(
  factor: string,
  met: boolean,
  yes: string,
  no: string,
  value: number | string,
): Factor {
  return { factor, value, met, text: met ? yes : no };
}

function noPending(type: TaskType, pending: PendingTasks): Factor {
  const p = pending[type];
  return exists(
    `pending-${type}`,
    p === undefined,
    `no ${type} task pending`,
    `a ${type} task is already ${p?.status === 'active' ? 'running' : 'waiting'}`,
    p?.status ?? 'none',
  );
}

function result(
  type: TaskType,
  work: readonly Factor[],
  gates: readonly Factor[],
  needed: boolean,
): RuleResult {
  const factors = [...work, ...gates];
  return {
    type,
    needed,
    fires: needed && gates.every((g) => g.met),
    factors,
    blockers: factors.filter((f) => !f.met).map((f) => f.text),
  };
}

/** Snapshots committed since the last expiry; when none is known, every snapshot is new. */
export function newSnapshots(state: TableState): number {
  return state.snapshots.sinceLastExpire ?? state.snapshots.total;
}

/**
 * Position-delete files + equality-delete files + deletion vectors: every delete file the
 * snapshot tracks, live ones and dangling ones alike (readers open both).
 */
export function deleteFiles(state: TableState): number {
  const f = state.files;
  return f.positionDeleteFiles + f.equalityDeleteFiles + f.deletionVectors;
}

/** Of `deleteFiles`, those that apply to no live data file (docs/iceberg.md). */
export function danglingDeleteFiles(state: TableState): number {
  const d = state.files.danglingDeletes;
  return d.positionDeleteFiles + d.equalityDeleteFiles + d.deletionVectors;
}

/**
 * Cleanup: new snapshots exist, and the total snapshot count is above the snapshot
 * threshold, and no cleanup task is pending.
 */
export function cleanupRule(state: TableState, policy: Policy, pending: PendingTasks): RuleResult {
  const fresh = newSnapshots(state);
  const work = [
    exists(
      'new-snapshots',
      fresh > 0,
      `${fresh} new snapshots since the last expiry`,
      'no new snapshots since the last expiry',
      fresh,
    ),
    above('snapshots', 'snapshots', state.snapshots.total, policy.snapshotThreshold),
  ];
  return result(
    'cleanup',
    work,
    [noPending('cleanup', pending)],
    work.every((f) => f.met),
  );
}

function mergeWork(state: TableState, policy: Policy) {
  const newFiles = state.newData.files;
  const newData = exists(
    'new-data',
    newFiles > 0,
    `${newFiles} new data files since the last rewrite`,
    'no new data since the last rewrite',
    newFiles,
  );
  const small = above(
    'small-files',
    'small files',
    state.files.smallFiles,
    policy.smallFileThreshold,
  );
  const deletes = above(
    'delete-files',
    'delete files',
    deleteFiles(state),
    policy.deleteFileThreshold,
  );
  // Dangling deletes need no new data to be work: only a merge removes them, and a table
  // whose last merge left them gets no new data by itself.
  const dangling = danglingDeleteFiles(state);
  const danglingWork = deletes.met && dangling > 0;
  const needed = (newData.met && (small.met || deletes.met)) || danglingWork;
  return { newData, small, deletes, danglingWork, needed };
}

/** Position deletes or deletion vectors are part of why a merge fires. */
export function rewritesPositionDeletes(state: TableState, policy: Policy): boolean {
  return (
    deleteFiles(state) > policy.deleteFileThreshold &&
    state.files.positionDeleteFiles + state.files.deletionVectors > 0
  );
}

/**
 * Merge: new data exists, and the small-file count or the delete-file count is above its
 * threshold, and no merge task is pending. A pending sort also counts: a sort rewrite
 * compacts, so a merge beside it would only repeat the work.
 */
export function mergeRule(state: TableState, policy: Policy, pending: PendingTasks): RuleResult {
  const w = mergeWork(state, policy);
  const work = [w.newData, w.small, w.deletes];
  const gates = [noPending('merge', pending)];
  const sort = pending.sort;
  if (sort !== undefined) {
    gates.push(
      exists(
        'pending-sort',
        false,
        '',
        `a sort task is ${sort.status === 'active' ? 'running' : 'waiting'} and compacts too`,
        sort.status,
      ),
    );
  }
  return blockersForOr(result('merge', work, gates, w.needed), w);
}

// With "small OR deletes", one unmet side is not a blocker when the other is met; nor is the
// lack of new data when dangling delete files make the work.
function blockersForOr(r: RuleResult, w: ReturnType<typeof mergeWork>): RuleResult {
  if (!(w.small.met || w.deletes.met)) return r;
  const hidden = new Set([w.small.met ? w.deletes.text : w.small.text]);
  if (w.danglingWork) hidden.add(w.newData.text);
  return { ...r, blockers: r.blockers.filter((b) => !hidden.has(b)) };
}

/** The sort order a sort task uses: policy columns or z-order, else the table's own. */
export type SortPlan =
  | {
      readonly strategy: 'sort';
      readonly columns: readonly {
        name: string;
        direction: 'asc' | 'desc';
        nullOrder: 'nulls-first' | 'nulls-last';
      }[];
      readonly from: 'policy' | 'table';
    }
  | {
      readonly strategy: 'zorder';
      readonly columns: readonly { name: string; direction: 'asc'; nullOrder: 'nulls-first' }[];
      readonly from: 'policy';
    };

export function sortPlan(state: TableState, policy: Policy): SortPlan | null {
  if (policy.zorderColumns.length > 0) {
    return {
      strategy: 'zorder',
      from: 'policy',
      columns: policy.zorderColumns.map((name) => ({
        name,
        direction: 'asc',
        nullOrder: 'nulls-first',
      })),
    };
  }
  if (policy.sortColumns.length > 0)
    return { strategy: 'sort', from: 'policy', columns: policy.sortColumns };
  // Fields whose source column was dropped have no name: they cannot be sorted by.
  const columns = state.sortOrder.fields.flatMap((f) =>
    f.column === undefined
      ? []
      : [{ name: f.column, direction: f.direction, nullOrder: f.nullOrder }],
  );
  return columns.length > 0 ? { strategy: 'sort', from: 'table', columns } : null;
}

/**
 * Sort: the merge conditions hold, and the table has a sort order (its own, or
 * `icepack.sort.columns` / `icepack.zorder.columns`), and new data's share of all data is
 * above the new-data threshold, and no sort task is pending. A running merge also holds it
 * back: the merge cannot be replaced while it runs, so the next table state decides.
 */
export function sortRule(state: TableState, policy: Policy, pending: PendingTasks): RuleResult {
  const w = mergeWork(state, policy);
  const order = sortPlan(state, policy);
  const work = [
    w.newData,
    w.small,
    w.deletes,
    exists(
      'sort-order',
      order !== null,
      order === null
        ? ''
        : `sort order (${order.strategy} by ${order.columns.map((c) => c.name).join(', ')}, from the ${order.from})`,
      'the table has no sort order and the policy names no sort or z-order columns',
      order === null ? 'none' : order.columns.map((c) => c.name).join(', '),
    ),
    above('new-data-share', 'new-data share', state.newData.share, policy.newDataShare),
  ];
  const gates = [noPending('sort', pending)];
  if (pending.merge?.status === 'active') {
    gates.push(
      exists(
        'pending-merge',
        false,
        '',
        'a merge task is running and cannot be replaced; the next table state decides',
        'active',
      ),
    );
  }
  const needed = w.needed && work.slice(3).every((f) => f.met);
  return blockersForOr(result('sort', work, gates, needed), w);
}
