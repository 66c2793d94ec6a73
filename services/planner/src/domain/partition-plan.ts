// Partition-scoped plans (docs/planner.md#partition-scoped-plans, ADR 0025): which partitions a
// merge or sort rewrites, newest first, by `icepack.merge.strategy`, split into tasks of at most
// `icepack.max-bytes-per-task`. Pure.
import {
  MAX_TASK_GROUPS,
  type PartitionPredicate,
  type PartitionSpecState,
  type PartitionState,
  type TableState,
} from '@icepack/types';
import type { MergeStrategy, Policy } from '@icepack/policy';
import { deleteFiles } from './rules.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const GiB = 1024 ** 3;

/** A task rewriting more than this commits as it goes (Iceberg's partial progress). */
export const PARTIAL_PROGRESS_ABOVE_BYTES = 10 * GiB;
/** Iceberg's `partial-progress.max-commits` default. */
export const PARTIAL_PROGRESS_MAX_COMMITS = 10;

/** One task's share of a partition-scoped plan. */
export interface PartitionGroup {
  /** 1 … MAX_TASK_GROUPS; group 1 holds the newest partitions. */
  readonly group: number;
  readonly partitions: readonly PartitionState[];
  /** Any of these partitions (each the AND of its predicates): the task's `partitions`. */
  readonly filter: readonly (readonly PartitionPredicate[])[];
  readonly smallFiles: number;
  readonly smallFileBytes: number;
  readonly deleteFiles: number;
  readonly deleteFileBytes: number;
  /** What the task rewrites: its small files' and delete files' bytes. */
  readonly bytesToRewrite: number;
  /** For people: `2 partitions (region=eu/day=2026-01-02, …): 40 small files, 3 delete files`. */
  readonly explanation: string;
}

export interface PartitionScope {
  /** False: the table is rewritten as a whole (unpartitioned, or no partition listed). */
  readonly scoped: boolean;
  /** Empty when scoped and no partition qualifies; one table-wide entry-less list when not scoped. */
  readonly groups: readonly PartitionGroup[];
  /** Partitions that qualify but did not fit in MAX_TASK_GROUPS tasks (the oldest; a later plan). */
  readonly leftOut: number;
  /** One sentence: what was chosen and why. */
  readonly reason: string;
}

/** `region=eu/day=2026-01-02` */
export function partitionText(p: PartitionState): string {
  const fields = Object.entries(p.partition).map(([k, v]) => `${k}=${v ?? 'null'}`);
  return fields.length === 0 ? '(unpartitioned)' : fields.join('/');
}

/**
 * The fewest files Iceberg's bin-pack planner rewrites for their count: a file group is kept
 * for `min-input-files` only when it also has more than one file
 * (`SizeBasedFileRewritePlanner.enoughInputFiles`, Iceberg 1.10), and merging one file with
 * nothing changes nothing.
 */
export const FEWEST_INPUT_FILES = 2;

/** The small files a partition needs for Iceberg to rewrite them for their count. */
function inputFilesNeeded(policy: Policy): number {
  return Math.max(FEWEST_INPUT_FILES, policy.minInputFiles);
}

/** Over its own thresholds: the rewrite would do something there (ADR 0025). */
export function partitionNeedsWork(p: PartitionState, policy: Policy): boolean {
  return p.smallFiles >= inputFilesNeeded(policy) || p.deleteFiles >= policy.perFileDeleteThreshold;
}

/** What Iceberg's planner looks at in one file group: a partition, or several pooled. */
interface RewriteFigures {
  readonly smallFiles: number;
  /** Undefined: not known (an older state). */
  readonly smallFileBytes?: number | undefined;
  readonly deleteFiles: number;
}

/**
 * Would Iceberg 1.10's bin-pack planner (`BinPackRewriteFilePlanner`, what `rewrite_data_files`
 * runs for merges, sorts and the job's Hilbert rewrite) pick a file group here, with the task's
 * options? Per partition of the current spec it takes the files below min-file-size (the
 * state's small files), above max-file-size, or with ≥ `delete-file-threshold` deletes, and
 * keeps a group when it has > 1 file and ≥ `min-input-files`, or > 1 file and more bytes than
 * the target, or more bytes than max-file-size, or a file with too many deletes (or ≥ 30 % of
 * its rows deleted). The state knows small files and delete files per partition, so: ≥
 * min-input-files small files (never fewer than 2), a delete file at the per-file threshold (the
 * partition's count, an upper bound of any one file's), or > 1 small file with more bytes than
 * one target file — true when the bytes are unknown. Files above max-file-size are not counted
 * by the scanner and fire no rule, so they are left out.
 */
function icebergRewrites(f: RewriteFigures, policy: Policy): boolean {
  return (
    f.smallFiles >= inputFilesNeeded(policy) ||
    f.deleteFiles >= policy.perFileDeleteThreshold ||
    (f.smallFiles > 1 &&
      (f.smallFileBytes === undefined || f.smallFileBytes > policy.targetFileSizeBytes))
  );
}

/**
 * Whether Iceberg rewrites anything in these partitions. Files of a spec other than the
 * current one are one file group in Iceberg, whatever their partition
 * (`BinPackRewriteFilePlanner.groupByPartition`: they may span several current partitions), so
 * those partitions' figures are pooled.
 */
function anyRewritten(
  partitions: readonly PartitionState[],
  currentSpecId: number,
  policy: Policy,
): boolean {
  let pooled = false;
  const older = { smallFiles: 0, smallFileBytes: 0 as number | undefined, deleteFiles: 0 };
  for (const p of partitions) {
    if (p.specId === currentSpecId) {
      if (icebergRewrites(p, policy)) return true;
      continue;
    }
    pooled = true;
    older.smallFiles += p.smallFiles;
    older.deleteFiles += p.deleteFiles;
    older.smallFileBytes =
      older.smallFileBytes === undefined || p.smallFileBytes === undefined
        ? undefined
        : older.smallFileBytes + p.smallFileBytes;
  }
  return pooled && icebergRewrites(older, policy);
}

/** `≥ 5 small files, a delete file or a target file's worth of small files` */
function rewriteNeeds(policy: Policy): string {
  return `≥ ${inputFilesNeeded(policy)} small files, a delete file or a target file's worth of small files`;
}

/**
 * The thresholds a merge or sort is planned and run with: the policy's, except when the commit
 * count (`icepack.merge.max-commits`) is the only trigger met. That trigger asks for a rewrite
 * of what the commits wrote, below the file thresholds:
 *
 * - Iceberg applies `min-input-files` per partition: with the policy's (5 by default) a table
 *   whose commits left 3 small files in each partition gets a Spark run that changes nothing.
 *   So the task carries {@link FEWEST_INPUT_FILES} (or the policy's, when lower), and every
 *   partition holding 2 or more small files is rewritten (ADR 0044).
 * - Only the partitions the commits since the last rewrite wrote are rewritten: those whose
 *   last sequence number is above the last `replace` snapshot's (ADR 0047). Older partitions
 *   with a few small files wait for the file thresholds, as without the trigger; the lowered
 *   `min-input-files` does not sweep them. Not known (a format v1 table, whose sequence numbers
 *   are all 0; no rewrite in the lineage; a state from before the figure) or an unpartitioned
 *   table (one file group): no restriction.
 *
 * When a file threshold fired as well, the policy's value stands and every partition counts:
 * the policy says which partitions are worth a rewrite.
 */
export interface RewriteThresholds {
  /** The policy the rewrite is planned and run under (only `minInputFiles` may differ). */
  readonly policy: Policy;
  /**
   * Only partitions whose last sequence number is above this one (the last rewrite's) are
   * rewritten; null: no such restriction.
   */
  readonly changedAfter: string | null;
  /**
   * What differs from the policy, for the decisions' reasons, in words: why `minInputFiles`
   * is lower than the policy's, and the `changedAfter` restriction.
   */
  readonly notes: readonly string[];
}

export function rewriteThresholds(
  state: TableState,
  policy: Policy,
  commitsAlone: boolean,
): RewriteThresholds {
  if (!commitsAlone) return { policy, changedAfter: null, notes: [] };
  // An unpartitioned table is one file group: nothing to restrict.
  const partitioned = state.partitionSpec.fields.some((f) => f.transform !== 'void');
  const since = state.newData.sinceSequenceNumber;
  const changedAfter =
    partitioned &&
    state.formatVersion > 1 &&
    state.newData.sinceSnapshotId !== null &&
    since !== undefined
      ? since
      : null;
  const scoped =
    changedAfter === null
      ? []
      : [
          `only partitions written since the last rewrite (sequence number ${changedAfter}): ` +
            `only the commit count fired`,
        ];
  if (policy.minInputFiles <= FEWEST_INPUT_FILES) return { policy, changedAfter, notes: scoped };
  const lowered =
    `min-input-files ${FEWEST_INPUT_FILES} instead of ${policy.minInputFiles}: only the commit ` +
    `count fired, and Iceberg rewrites a partition's small files only from min-input-files of them`;
  return {
    policy: { ...policy, minInputFiles: FEWEST_INPUT_FILES },
    changedAfter,
    notes: [lowered, ...scoped],
  };
}

/** The partition changed after sequence number `after` (its last one is above it; unknown: yes). */
function changedSince(p: PartitionState, after: number | bigint): boolean {
  return p.lastSequenceNumber === undefined || sequenceOf(p.lastSequenceNumber) > after;
}

/**
 * Nothing a rewrite of this state would change, by Iceberg's own rules ({@link
 * icebergRewrites}): the reason a merge is not planned, or null when a rewrite can change
 * something or the state cannot tell.
 *
 * - Files spread thin: every partition with a small or delete file is listed, and none of them
 *   holds what Iceberg needs to pick a file group there. A lake with daily batch loads, one
 *   file per day, fires the table-wide small-file count; a merge planned then runs Spark and
 *   changes nothing (a wasted task). Some partitions needing work not listed: null.
 * - An unpartitioned table is one file group: its own figures decide (a commit-count trigger
 *   on a table with one small file, or a `min-input-files` above the small-file threshold).
 * - A partitioned table listing no partition: null (a table-wide task, Iceberg decides).
 */
export function rewritesNothing(state: TableState, policy: Policy): string | null {
  const partitioned = state.partitionSpec.fields.some((f) => f.transform !== 'void');
  if (!partitioned) {
    const f = state.files;
    const deletes = deleteFiles(state);
    const figures = {
      smallFiles: f.smallFiles,
      smallFileBytes: f.smallFileBytes,
      deleteFiles: deletes,
    };
    if (icebergRewrites(figures, policy)) return null;
    return (
      `nothing to rewrite: the table has ${f.smallFiles} small file${f.smallFiles === 1 ? '' : 's'} ` +
      `and ${deletes} delete files, not ${rewriteNeeds(policy)}, so a rewrite would change nothing`
    );
  }
  const total = state.partitionTotals;
  const listed = state.partitions.filter(hasFields);
  if (total === undefined || listed.length === 0) return null;
  if (total.listed < total.needingWork) return null;
  if (anyRewritten(listed, state.partitionSpec.specId, policy)) return null;
  return (
    `files spread thin: none of the ${total.needingWork} partitions with small or delete files ` +
    `has ${rewriteNeeds(policy)}, so a rewrite would change nothing`
  );
}

/**
 * A change time as text that sorts in time order: `toISOString`'s form (what the scanner
 * writes) as it is — for those, comparing texts is comparing times, with no parse — and any
 * other form the schema allows (an offset, another precision) rewritten to it. Absent or
 * unparseable: '' (the oldest). Date.parse was ~40 % of ordering a state's partitions
 * (217 ns a partition, the text check ~2 ns; issue 17 point 6). A 24-character ISO time that
 * ends in `Z` can only be `YYYY-MM-DDTHH:MM:SS.sssZ`; years past 9999 are not expected.
 */
function sortableTime(text: string | undefined): string {
  if (text === undefined) return '';
  if (
    text.length === 24 &&
    text.charCodeAt(23) === 90 /* Z */ &&
    text.charCodeAt(10) === 84 /* T */
  )
    return text;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? '' : new Date(ms).toISOString();
}

/**
 * Whether the partition has a field value (an unpartitioned spec's partition has none). A
 * loop that stops at the first key: `Object.keys` built an array per partition (its
 * allocations showed in the replica benchmark's heap profile, issue 17 point 6).
 */
function hasFields(p: PartitionState): boolean {
  for (const _ in p.partition) return true;
  return false;
}

/**
 * A sequence number for comparing: a number while exact (up to 15 digits; `Number` is ~5× as
 * fast as `BigInt`), a bigint beyond. Relational comparison of the two is exact; equality
 * (`===`) is not, so {@link newerKey} uses only `<` and `>`. Absent: -1.
 */
function sequenceOf(text: string | undefined): number | bigint {
  if (text === undefined) return -1;
  return text.length <= 15 ? Number(text) : BigInt(text);
}

/** What {@link sortedNewestFirst} orders by; the text only when time and sequence tie. */
interface RecencyKey {
  readonly p: PartitionState;
  readonly at: string;
  readonly seq: number | bigint;
  text?: string;
}

function recencyKey(p: PartitionState): RecencyKey {
  return { p, at: sortableTime(p.lastChangedAt), seq: sequenceOf(p.lastSequenceNumber) };
}

function newerKey(a: RecencyKey, b: RecencyKey): number {
  if (a.at !== b.at) return b.at > a.at ? 1 : -1;
  if (a.seq < b.seq) return 1;
  if (a.seq > b.seq) return -1;
  const at = (a.text ??= partitionText(a.p));
  const bt = (b.text ??= partitionText(b.p));
  return at === bt ? 0 : at < bt ? 1 : -1;
}

/**
 * The partitions newest first: last change time, then last sequence number, then partition
 * text descending. The keys are made once per partition: a sort of the 100 a state lists
 * compares ~700 times, and parsing in each comparison was half of planning a partitioned
 * table (bench/results/planner-plan-partitions-2026-12-02.md, issue 17).
 */
export function sortedNewestFirst(partitions: readonly PartitionState[]): PartitionState[] {
  return partitions
    .map(recencyKey)
    .sort(newerKey)
    .map((k) => k.p);
}

function matchesSelected(p: PartitionState, strategy: MergeStrategy & { kind: 'selected' }) {
  return strategy.filters.some((filter) =>
    Object.entries(filter).every(
      ([field, value]) => field in p.partition && p.partition[field] === value,
    ),
  );
}

function specsOf(state: TableState): ReadonlyMap<number, PartitionSpecState> {
  const specs = new Map<number, PartitionSpecState>();
  for (const spec of state.otherPartitionSpecs ?? []) specs.set(spec.specId, spec);
  specs.set(state.partitionSpec.specId, state.partitionSpec);
  return specs;
}

/**
 * The filter that selects exactly one partition: `transform(column) = value` per field of its
 * spec (a `void` field says nothing). Null when it cannot be written: the spec is unknown, a
 * source column was dropped, or every field is void.
 */
export function partitionPredicates(
  p: PartitionState,
  specs: ReadonlyMap<number, PartitionSpecState>,
): PartitionPredicate[] | null {
  const spec = specs.get(p.specId);
  if (spec === undefined) return null;
  const predicates: PartitionPredicate[] = [];
  for (const field of spec.fields) {
    if (field.transform === 'void') continue;
    if (field.column === undefined || !(field.name in p.partition)) return null;
    const value = p.partition[field.name] ?? null;
    predicates.push(
      field.transform === 'identity'
        ? { column: field.column, value }
        : { column: field.column, transform: field.transform, value },
    );
  }
  return predicates.length === 0 ? null : predicates;
}

/** Bytes a rewrite of the partition reads: its small files and delete files (estimated for older states). */
export function partitionRewriteBytes(p: PartitionState): number {
  const small =
    p.smallFileBytes ??
    (p.dataFiles === 0 ? 0 : Math.round((p.bytes * p.smallFiles) / p.dataFiles));
  return small + (p.deleteFileBytes ?? 0);
}

function strategyText(strategy: MergeStrategy): string {
  switch (strategy.kind) {
    case 'all':
      return 'all';
    case 'recent':
      return 'days' in strategy ? `recent:${strategy.days}d` : `recent:${strategy.partitions}`;
    case 'selected':
      return 'selected';
  }
}

/** Of the listed partitions, those the strategy allows (newest first). */
function allowed(
  sorted: readonly PartitionState[],
  strategy: MergeStrategy,
  now: Date,
): PartitionState[] {
  switch (strategy.kind) {
    case 'all':
      return [...sorted];
    case 'selected':
      return sorted.filter((p) => matchesSelected(p, strategy));
    case 'recent': {
      if ('partitions' in strategy) return sorted.slice(0, strategy.partitions);
      const since = now.getTime() - strategy.days * DAY_MS;
      return sorted.filter(
        (p) => p.lastChangedAt !== undefined && Date.parse(p.lastChangedAt) >= since,
      );
    }
  }
}

function group(
  index: number,
  members: readonly { p: PartitionState; predicates: PartitionPredicate[] }[],
): PartitionGroup {
  // One pass for the five sums (five reduces with a closure each were ~3 % of a state's
  // handling in the planner benchmark; issue 17 point 6). Same order of addition: same sums.
  let smallFiles = 0;
  let deleteFiles = 0;
  let smallFileBytes = 0;
  let deleteFileBytes = 0;
  let bytesToRewrite = 0;
  const partitions: PartitionState[] = [];
  const filter: PartitionPredicate[][] = [];
  for (const { p, predicates } of members) {
    smallFiles += p.smallFiles;
    deleteFiles += p.deleteFiles;
    smallFileBytes += p.smallFileBytes ?? 0;
    deleteFileBytes += p.deleteFileBytes ?? 0;
    bytesToRewrite += partitionRewriteBytes(p);
    partitions.push(p);
    filter.push(predicates);
  }
  const shown = members.slice(0, 3).map((m) => partitionText(m.p));
  const more = members.length > 3 ? `, … ${members.length - 3} more` : '';
  return {
    group: index,
    partitions,
    filter,
    smallFiles,
    smallFileBytes,
    deleteFiles,
    deleteFileBytes,
    bytesToRewrite,
    explanation:
      `${members.length} partition${members.length === 1 ? '' : 's'} (${shown.join(', ')}${more}): ` +
      `${smallFiles} small files, ${deleteFiles} delete files`,
  };
}

/**
 * Which partitions a merge or sort of this state rewrites, and in how many tasks. The table is
 * rewritten as a whole when it is unpartitioned or the state lists no partition. Otherwise:
 * the listed partitions the strategy allows that are over their thresholds, newest first, in
 * groups of at most `maxBytesPerTask` (a partition larger than that is a group of its own), at
 * most `MAX_TASK_GROUPS` groups. When none is over its thresholds: with `all` the whole table,
 * with `recent`/`selected` their partitions Iceberg would still rewrite (enough small-file
 * bytes; the restriction holds), and none when there is no such partition: a task there would
 * run Spark and change nothing. `policy` is the one the rewrite runs under, and with
 * `changedAfter` only partitions changed after that sequence number count, with no table-wide
 * fallback ({@link rewriteThresholds}).
 */
export function partitionScope(
  state: TableState,
  policy: Policy,
  now: Date,
  changedAfter: string | null = null,
): PartitionScope {
  const partitioned = state.partitionSpec.fields.some((f) => f.transform !== 'void');
  const listed = state.partitions.filter(hasFields);
  if (!partitioned || listed.length === 0) {
    return {
      scoped: false,
      groups: [],
      leftOut: 0,
      reason: partitioned
        ? 'no partition listed: the whole table'
        : 'unpartitioned: the whole table',
    };
  }
  const specs = specsOf(state);
  const sorted = sortedNewestFirst(listed);
  const after = changedAfter === null ? null : sequenceOf(changedAfter);
  const strategy = strategyText(policy.mergeStrategy);
  const since =
    changedAfter === null
      ? ''
      : ` written since the last rewrite (sequence number ${changedAfter})`;
  // (A loop, not flatMap: no array per partition.)
  const filterable: { p: PartitionState; predicates: PartitionPredicate[] }[] = [];
  for (const p of allowed(sorted, policy.mergeStrategy, now)) {
    if (after !== null && !changedSince(p, after)) continue;
    const predicates = partitionPredicates(p, specs);
    if (predicates !== null) filterable.push({ p, predicates });
  }
  let chosen = filterable.filter((m) => partitionNeedsWork(m.p, policy));
  if (chosen.length === 0 && policy.mergeStrategy.kind === 'all' && after === null) {
    // The table's rule fired on figures no listed partition carries alone (files spread thin,
    // an older state without column names): as before partitions were planned, the whole
    // table, and Iceberg's own per-group thresholds decide — `rewritesNothing` keeps a merge
    // from being planned when the state shows they will pick nothing.
    return {
      scoped: false,
      groups: [],
      leftOut: 0,
      reason: `no listed partition has ≥ ${inputFilesNeeded(policy)} small files or ≥ ${policy.perFileDeleteThreshold} delete files: the whole table`,
    };
  }
  if (chosen.length === 0) {
    // A restricting strategy (or the commits' partitions) keeps its restriction: its
    // partitions Iceberg would rewrite with the task's options — more small-file bytes than one
    // target file, or, pooled, the files of older specs (one file group in Iceberg). A partition with a few small files below
    // min-input-files would make a task that runs Spark and changes nothing.
    const current = state.partitionSpec.specId;
    const older = filterable.filter((m) => m.p.specId !== current);
    const olderRewritten = anyRewritten(
      older.map((m) => m.p),
      current,
      policy,
    );
    chosen = filterable.filter((m) =>
      m.p.specId === current
        ? icebergRewrites(m.p, policy)
        : olderRewritten && m.p.smallFiles + m.p.deleteFiles > 0,
    );
    if (chosen.length === 0) {
      const some = filterable.some((m) => m.p.smallFiles + m.p.deleteFiles > 0);
      return {
        scoped: true,
        groups: [],
        leftOut: 0,
        reason: some
          ? `no partition${since} the strategy ${strategy} allows has ${rewriteNeeds(policy)}, so a rewrite would change nothing`
          : `no partition${since} the strategy ${strategy} allows has small files or delete files`,
      };
    }
  }
  const groups: PartitionGroup[] = [];
  let current: { p: PartitionState; predicates: PartitionPredicate[] }[] = [];
  let bytes = 0;
  let placed = 0;
  for (const member of chosen) {
    const b = partitionRewriteBytes(member.p);
    if (current.length > 0 && bytes + b > policy.maxBytesPerTask) {
      groups.push(group(groups.length + 1, current));
      current = [];
      bytes = 0;
      if (groups.length === MAX_TASK_GROUPS) break;
    }
    current.push(member);
    bytes += b;
    placed++;
  }
  // Left over only when the loop ran out of partitions (a full set of groups breaks it first).
  if (current.length > 0) groups.push(group(groups.length + 1, current));
  const leftOut = chosen.length - placed;
  const total = state.partitionTotals;
  const unlisted =
    total !== undefined && total.partitions > total.listed
      ? `; ${total.partitions - total.listed} partitions not listed in the state wait for a later scan`
      : '';
  return {
    scoped: true,
    groups,
    leftOut,
    reason:
      `${placed} of ${listed.length} listed partitions${since} over their thresholds (strategy ${strategy}), ` +
      `newest first, in ${groups.length} task${groups.length === 1 ? '' : 's'} of at most ${policy.maxBytesPerTask} bytes` +
      (leftOut > 0
        ? `; ${leftOut} older ones wait for a later plan (at most ${MAX_TASK_GROUPS} tasks)`
        : '') +
      unlisted,
  };
}

/**
 * Partial progress (each file group commits on its own) for a task that rewrites much
 * (ADR 0025), or on a table with row-level deletes: its writers commit position or equality
 * deletes while it is rewritten, and one commit for the whole rewrite conflicts with any of
 * them that touches a rewritten file — in the 30-minute lake-sim every merge of a CDC table
 * (a MERGE every 45 s) failed that way, all three attempts — while a group's own commit
 * conflicts only with deletes on its files. Absent otherwise (one commit, one snapshot).
 */
export function partialProgressFor(
  bytesToRewrite: number,
  rowLevelDeletes = false,
): { enabled: true; maxCommits: number } | undefined {
  return bytesToRewrite > PARTIAL_PROGRESS_ABOVE_BYTES || rowLevelDeletes
    ? { enabled: true, maxCommits: PARTIAL_PROGRESS_MAX_COMMITS }
    : undefined;
}

/** The table has delete files (position, equality, deletion vectors): row-level writers. */
export function hasRowLevelDeletes(state: TableState): boolean {
  const f = state.files;
  return f.positionDeleteFiles + f.equalityDeleteFiles + f.deletionVectors > 0;
}
