// The maintenance rules of maintenance-rules.md as pure functions. "Above" is strictly
// greater (>): a table exactly at a threshold gets no task.
import type { TableState, TaskType } from '@icepack/types';
import { PolicyKeys, type Policy } from '@icepack/policy';

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
  /** `snapshots`, `expirable`, `min-interval`, `new-data`, `small-files`, `delete-files`, `sort-order`, `new-data-share`, `pending-…` */
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

const MINUTE_MS = 60_000;

/** `45s`, `12m`, `3h`, `2d`: a span in the largest unit that keeps it a whole number or ≥ 1. */
export function formatSpan(ms: number): string {
  const units: readonly [string, number][] = [
    ['d', 24 * 60 * MINUTE_MS],
    ['h', 60 * MINUTE_MS],
    ['m', MINUTE_MS],
    ['s', 1000],
  ];
  for (const [unit, size] of units) {
    if (ms >= size) return `${Math.floor(ms / size)}${unit}`;
  }
  return `${Math.max(0, Math.round(ms))}ms`;
}

/** The key that sets a type's minimum interval (the orphans' is their cadence). */
const INTERVAL_KEYS: Readonly<Record<TaskType, string>> = {
  cleanup: PolicyKeys.cleanupMinInterval,
  merge: PolicyKeys.mergeMinInterval,
  sort: PolicyKeys.sortMinInterval,
  orphans: PolicyKeys.orphanInterval,
};

/**
 * The minimum interval: the last task of this type on the table succeeded long enough ago
 * (`state.lastMaintenance`, which the planner fills from the `succeeded` task events).
 */
export function minIntervalFactor(
  type: TaskType,
  state: TableState,
  policy: Policy,
  now: Date,
): Factor {
  const min = policy.minIntervalMs[type];
  const last = state.lastMaintenance?.[type];
  if (last === undefined) {
    return exists('min-interval', true, `no ${type} has succeeded on the table yet`, '', 'none');
  }
  const ago = now.getTime() - Date.parse(last);
  return exists(
    'min-interval',
    ago >= min,
    `the last ${type} succeeded ${formatSpan(ago)} ago (at least ${formatSpan(min)} apart)`,
    `the last ${type} succeeded ${formatSpan(ago)} ago; the next waits until ${formatSpan(min)} have passed (${INTERVAL_KEYS[type]})`,
    last,
  );
}

/** What an expiry now would go by: the `main` branch's own retention wins, as in Iceberg. */
export function expiryCutoffs(
  state: TableState,
  policy: Policy,
  now: Date,
): { readonly mainCutoffMs: number; readonly retainLast: number; readonly cutoffMs: number } {
  const main = state.refs.find((r) => r.name === 'main' && r.type === 'branch');
  const cutoffMs = now.getTime() - policy.maxSnapshotAgeMs;
  return {
    cutoffMs,
    mainCutoffMs: now.getTime() - (main?.maxSnapshotAgeMs ?? policy.maxSnapshotAgeMs),
    retainLast: main?.minSnapshotsToKeep ?? policy.minSnapshotsToKeep,
  };
}

/**
 * An expiry can remove something: a snapshot of the current lineage older than the
 * retention and beyond the last `retainLast`, or a snapshot no branch or tag reaches that is
 * older than the retention. Snapshots other branches or tags keep are left out, so a
 * cleanup never fires for snapshots it would keep.
 */
export function expirableFactor(state: TableState, policy: Policy, now: Date): Factor {
  const { mainCutoffMs, retainLast, cutoffMs } = expiryCutoffs(state, policy, now);
  const retention = formatSpan(policy.maxSnapshotAgeMs);
  const e = state.snapshots.expiry;
  const older = (at: string | undefined, cutoff: number): boolean =>
    at !== undefined && Date.parse(at) < cutoff;
  // A state from a scanner before the expiry figures: the whole table's oldest snapshot.
  const fromMain =
    e === undefined
      ? state.snapshots.total > retainLast && older(state.snapshots.oldestAt, mainCutoffMs)
      : e.mainOnly > retainLast && older(e.oldestMainOnlyAt, mainCutoffMs);
  const fromOthers =
    e !== undefined && e.unreferenced > 0 && older(e.oldestUnreferencedAt, cutoffMs);
  const oldest = fromMain
    ? (e?.oldestMainOnlyAt ?? state.snapshots.oldestAt)
    : fromOthers
      ? e.oldestUnreferencedAt
      : undefined;
  return exists(
    'expirable',
    fromMain || fromOthers,
    `snapshots older than the ${retention} retention beyond the last ${retainLast} exist (oldest ${oldest ?? '?'})`,
    `no snapshot an expiry would remove: each is inside the ${retention} retention, among the last ${retainLast}, or kept by a branch or tag`,
    oldest ?? 'none',
  );
}

/**
 * Cleanup: the snapshot count is above the snapshot threshold, and an expiry can remove
 * something, and the last cleanup succeeded at least the minimum interval ago, and no
 * cleanup task is pending.
 */
export function cleanupRule(
  state: TableState,
  policy: Policy,
  pending: PendingTasks,
  now: Date,
): RuleResult {
  const work = [
    above('snapshots', 'snapshots', state.snapshots.total, policy.snapshotThreshold),
    expirableFactor(state, policy, now),
  ];
  return result(
    'cleanup',
    work,
    [noPending('cleanup', pending), minIntervalFactor('cleanup', state, policy, now)],
    work.every((f) => f.met),
  );
}

/**
 * The work a merge (and a sort, which compacts too) is for, judged once per state: new data and
 * the triggers (small files, delete files, the commit count), and what follows from them.
 */
export interface RewriteWork {
  readonly newData: Factor;
  readonly small: Factor;
  readonly deletes: Factor;
  /** `icepack.merge.max-commits`; null when unset. */
  readonly commits: Factor | null;
  /** small, deletes and, when set, commits: any one met is enough. */
  readonly triggers: readonly Factor[];
  /** Dangling delete files above the delete threshold: work without new data. */
  readonly danglingWork: boolean;
  readonly needed: boolean;
  /**
   * The commit count is met and neither file threshold is: the rewrite lowers
   * `min-input-files` and acts on the partitions the commits wrote (`rewriteThresholds`,
   * ADR 0044, 0047).
   */
  readonly commitsAlone: boolean;
}

export function rewriteWork(state: TableState, policy: Policy): RewriteWork {
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
  const commits = commitsFactor(state, policy);
  // Dangling deletes need no new data to be work: only a merge removes them, and a table
  // whose last merge left them gets no new data by itself.
  const dangling = danglingDeleteFiles(state);
  const danglingWork = deletes.met && dangling > 0;
  const triggers = [small, deletes, ...(commits === null ? [] : [commits])];
  const needed = (newData.met && triggers.some((f) => f.met)) || danglingWork;
  const commitsAlone = commits?.met === true && !small.met && !deletes.met;
  return { newData, small, deletes, commits, triggers, danglingWork, needed, commitsAlone };
}

/**
 * `icepack.merge.max-commits`: at least that many commits since the last rewrite (`replace`
 * snapshot) — the trigger of a clustering service's "every N commits". Null when unset.
 */
function commitsFactor(state: TableState, policy: Policy): Factor | null {
  const limit = policy.mergeMaxCommits;
  if (limit === null) return null;
  const commits = state.snapshots.sinceLastRewrite;
  const met = commits >= limit;
  return {
    factor: 'commits',
    value: commits,
    threshold: limit,
    met,
    text: met
      ? `${commits} commits since the last rewrite ≥ ${limit}`
      : `${commits} commits since the last rewrite < ${limit}`,
  };
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
 * threshold (or, with `icepack.merge.max-commits`, that many commits followed the last
 * rewrite), and the last merge succeeded at least the minimum interval ago, and no merge
 * task is pending. A pending sort also counts: a sort rewrite
 * compacts, so a merge beside it would only repeat the work. The result carries the work it
 * judged, for the sort rule and the rewrite's thresholds: one judgement per state.
 */
export function mergeRule(
  state: TableState,
  policy: Policy,
  pending: PendingTasks,
  now: Date,
): MergeRuleResult {
  const w = rewriteWork(state, policy);
  const work = [w.newData, ...w.triggers];
  const gates = [noPending('merge', pending), minIntervalFactor('merge', state, policy, now)];
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
  return { ...blockersForOr(result('merge', work, gates, w.needed), w), work: w };
}

/** The merge rule's result and the work it judged (the sort's and the scope's input). */
export interface MergeRuleResult extends RuleResult {
  readonly work: RewriteWork;
}

// With "small OR deletes OR commits", an unmet trigger is not a blocker when another is met;
// nor is the lack of new data when dangling delete files make the work.
function blockersForOr(r: RuleResult, w: RewriteWork): RuleResult {
  if (!w.triggers.some((f) => f.met)) return r;
  const hidden = new Set(w.triggers.filter((f) => !f.met).map((f) => f.text));
  if (w.danglingWork) hidden.add(w.newData.text);
  return { ...r, blockers: r.blockers.filter((b) => !hidden.has(b)) };
}

/** The sort order a sort task uses: policy columns, z-order or Hilbert, else the table's own. */
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
      readonly strategy: 'zorder' | 'hilbert';
      readonly columns: readonly { name: string; direction: 'asc'; nullOrder: 'nulls-first' }[];
      readonly from: 'policy';
    };

export function sortPlan(state: TableState, policy: Policy): SortPlan | null {
  // The policy resolves at most one of the layouts (packages/policy).
  const curve: ['zorder' | 'hilbert', readonly string[]] | null =
    policy.zorderColumns.length > 0
      ? ['zorder', policy.zorderColumns]
      : policy.hilbertColumns.length > 0
        ? ['hilbert', policy.hilbertColumns]
        : null;
  if (curve !== null) {
    return {
      strategy: curve[0],
      from: 'policy',
      columns: curve[1].map((name) => ({ name, direction: 'asc', nullOrder: 'nulls-first' })),
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
 * `icepack.sort.columns` / `icepack.zorder.columns` / `icepack.hilbert.columns`), and new data's share of all data is
 * above the new-data threshold, and the last sort succeeded at least the minimum interval ago,
 * and no sort task is pending. A running merge also holds it
 * back: the merge cannot be replaced while it runs, so the next table state decides. `w` is
 * the merge rule's work (`MergeRuleResult.work`), judged once per state.
 */
export function sortRule(
  state: TableState,
  policy: Policy,
  pending: PendingTasks,
  now: Date,
  w: RewriteWork = rewriteWork(state, policy),
): RuleResult {
  const order = sortPlan(state, policy);
  const sortWork = [
    exists(
      'sort-order',
      order !== null,
      order === null
        ? ''
        : `sort order (${order.strategy} by ${order.columns.map((c) => c.name).join(', ')}, from the ${order.from})`,
      'the table has no sort order and the policy names no sort, z-order or Hilbert columns',
      order === null ? 'none' : order.columns.map((c) => c.name).join(', '),
    ),
    above('new-data-share', 'new-data share', state.newData.share, policy.newDataShare),
  ];
  const work = [w.newData, ...w.triggers, ...sortWork];
  const gates = [noPending('sort', pending), minIntervalFactor('sort', state, policy, now)];
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
  const needed = w.needed && sortWork.every((f) => f.met);
  return blockersForOr(result('sort', work, gates, needed), w);
}

/**
 * Orphans: due on a cadence, since the scanner lists no storage (it reads metadata only, so
 * it cannot see a file nothing references): the last orphans run succeeded at least
 * `icepack.orphan.interval` ago (or none has), and no orphans task is pending. The interval is
 * the work condition itself; being off by default is the plan's gate (ADR 0032).
 */
export function orphansRule(
  state: TableState,
  policy: Policy,
  pending: PendingTasks,
  now: Date,
): RuleResult {
  const due = minIntervalFactor('orphans', state, policy, now);
  return result('orphans', [due], [noPending('orphans', pending)], due.met);
}
