import {
  expandPartitionSets,
  MAX_TASK_GROUPS,
  taskSchema,
  type PartitionState,
  type TableState,
  type Task,
} from '@icepack/types';
import { tableState } from './state-fixtures.ts';
import { resolvePolicy } from '@icepack/policy';
import { describe, expect, it } from 'vitest';
import {
  partialProgressFor,
  partitionPredicates,
  partitionScope,
  PARTIAL_PROGRESS_ABOVE_BYTES,
} from './partition-plan.ts';
import { planTable, type TablePlan, type TaskDecision } from './plan.ts';
import type { PendingTask } from './rules.ts';
import { dayPartition as day, partitionedTableState as partitioned } from './state-fixtures.ts';

import { PARTITIONS_NOW as now } from './state-fixtures.ts';
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

const policyOf = (props: Record<string, string> = {}) => resolvePolicy(props).policy;
const texts = (s: ReturnType<typeof partitionScope>) =>
  s.groups.map((g) => g.partitions.map((p) => p.partition['ts_day'] ?? p.partition['region']));

const days = [
  day('2026-01-05', 5),
  day('2026-01-09', 1),
  day('2026-01-07', 3),
  day('2026-01-08', 2, { smallFiles: 2 }), // below min-input-files (5), no deletes
  day('2026-01-01', 9, {
    smallFiles: 0,
    smallFileBytes: 0,
    deleteFiles: 3,
    deleteFileBytes: 10 * MiB,
  }),
];

// The lake simulator's batch tables (issue 15): one small file per daily load, 26 days, so
// the table-wide count (26 ≥ 20) fired a merge that Iceberg's min-input-files turned into a
// Spark run changing nothing — a wasted task.
const thinDays = Array.from({ length: 26 }, (_, i) =>
  day(`2025-12-${String(i + 1).padStart(2, '0')}`, 40 - i, {
    dataFiles: 1,
    smallFiles: 1,
    bytes: 5000,
    smallFileBytes: 5000,
  }),
);

describe('partitionScope: which partitions, newest first', () => {
  it('all (default): every partition over its thresholds, newest first, in one task', () => {
    const scope = partitionScope(partitioned(days), policyOf(), now);
    expect(scope.scoped).toBe(true);
    expect(texts(scope)).toEqual([['2026-01-09', '2026-01-07', '2026-01-05', '2026-01-01']]);
    expect(scope.reason).toMatch(
      /^4 of 5 listed partitions over their thresholds \(strategy all\)/,
    );
  });

  it('ties on change time go by sequence number, then partition text, descending', () => {
    const at = '2026-01-09T00:00:00.000Z';
    const tied = [
      day('2026-01-02', 0, { lastChangedAt: at, lastSequenceNumber: '7' }),
      day('2026-01-03', 0, { lastChangedAt: at, lastSequenceNumber: '9' }),
      day('2026-01-04', 0, { lastChangedAt: at, lastSequenceNumber: '7' }),
      day('2026-01-05', 0, { lastChangedAt: undefined, lastSequenceNumber: '99' }),
      day('2026-01-06', 0, { lastChangedAt: at, lastSequenceNumber: undefined }),
    ];
    expect(texts(partitionScope(partitioned(tied), policyOf(), now))).toEqual([
      ['2026-01-03', '2026-01-04', '2026-01-02', '2026-01-06', '2026-01-05'],
    ]);
  });

  it('orders times by instant whatever their form, and sequence numbers past 15 digits exactly', () => {
    // Times as the scanner writes them compare as text; an offset or another precision is the
    // same instant rewritten. Sequence numbers compare as numbers, bigints past 15 digits.
    const at = '2026-01-09T00:00:00.000Z';
    const mixed = [
      day('2026-01-02', 0, { lastChangedAt: '2026-01-09T01:30:00+02:00' }), // 2026-01-08T23:30Z
      day('2026-01-03', 0, { lastChangedAt: '2026-01-08T23:45:00Z' }),
      day('2026-01-04', 0, { lastChangedAt: '2026-01-09T00:00:00.5Z' }),
      day('2026-01-05', 0, { lastChangedAt: at, lastSequenceNumber: '9007199254740993' }),
      day('2026-01-06', 0, { lastChangedAt: at, lastSequenceNumber: '9007199254740992' }),
      day('2026-01-07', 0, { lastChangedAt: at, lastSequenceNumber: '999999999999999' }),
      day('2026-01-08', 0, { lastChangedAt: at, lastSequenceNumber: '9223372036854775807' }),
    ];
    expect(texts(partitionScope(partitioned(mixed), policyOf(), now))).toEqual([
      [
        '2026-01-04',
        '2026-01-08',
        '2026-01-05',
        '2026-01-06',
        '2026-01-07',
        '2026-01-03',
        '2026-01-02',
      ],
    ]);
  });

  it('recent:N takes the N most recently changed partitions, then those over thresholds', () => {
    const scope = partitionScope(
      partitioned(days),
      policyOf({ 'icepack.merge.strategy': 'recent:3' }),
      now,
    );
    // 2026-01-08 is among the 3 newest but below its thresholds.
    expect(texts(scope)).toEqual([['2026-01-09', '2026-01-07']]);
  });

  it('recent:Nd takes partitions changed within N days; one with no known change time is old', () => {
    const unknown = day('2026-01-06', 4, { lastChangedAt: undefined });
    const scope = partitionScope(
      partitioned([...days, unknown]),
      policyOf({ 'icepack.merge.strategy': 'recent:6d' }),
      now,
    );
    expect(texts(scope)).toEqual([['2026-01-09', '2026-01-07', '2026-01-05']]);
  });

  it('selected takes the partitions matching any filter, by partition field name', () => {
    const us = day('2026-01-09', 1, {}, 'us');
    const scope = partitionScope(
      partitioned([...days, us]),
      policyOf({ 'icepack.merge.strategy': 'selected:region=us;region=eu,ts_day=2026-01-05' }),
      now,
    );
    expect(scope.groups.map((g) => g.partitions.map((p) => p.partition))).toEqual([
      [
        { region: 'us', ts_day: '2026-01-09' },
        { region: 'eu', ts_day: '2026-01-05' },
      ],
    ]);
  });

  it('a restricting strategy with nothing over thresholds rewrites its partitions Iceberg would', () => {
    // 2 small files of 1 GiB: more than one target file (Iceberg's enoughContent); 1 small
    // file: never rewritten for its count.
    const thin = [
      day('2026-01-09', 1, { smallFiles: 2 }),
      day('2026-01-08', 2, { smallFiles: 1 }),
      day('2026-01-01', 9, { smallFiles: 0 }),
    ];
    const scope = partitionScope(
      partitioned(thin),
      policyOf({ 'icepack.merge.strategy': 'recent:3' }),
      now,
    );
    expect(texts(scope)).toEqual([['2026-01-09']]);
    // "all" falls back to the whole table: Iceberg's own thresholds decide, as before.
    const all = partitionScope(partitioned(thin), policyOf(), now);
    expect(all).toMatchObject({ scoped: false, groups: [] });
  });

  it('a selected strategy matching nothing plans nothing, and says so', () => {
    const scope = partitionScope(
      partitioned(days),
      policyOf({ 'icepack.merge.strategy': 'selected:region=apac' }),
      now,
    );
    expect(scope).toMatchObject({ scoped: true, groups: [] });
    expect(scope.reason).toBe(
      'no partition the strategy selected allows has small files or delete files',
    );
  });

  it('an unpartitioned table is rewritten as a whole', () => {
    const state = tableState(
      { smallFiles: 80 },
      { partitionSpec: { specId: 0, fields: [] }, partitions: [] },
    );
    expect(partitionScope(state, policyOf(), now)).toMatchObject({ scoped: false });
  });
});

describe('partitionScope: split by icepack.max-bytes-per-task', () => {
  it('groups newest first up to the byte bound; each group is its own task', () => {
    const scope = partitionScope(
      partitioned(days),
      policyOf({ 'icepack.max-bytes-per-task': '2GiB' }),
      now,
    );
    // 1 GiB each for the small-file partitions, 10 MiB of deletes for 2026-01-01.
    expect(texts(scope)).toEqual([
      ['2026-01-09', '2026-01-07'],
      ['2026-01-05', '2026-01-01'],
    ]);
    expect(scope.groups.map((g) => g.bytesToRewrite)).toEqual([2 * GiB, GiB + 10 * MiB]);
    expect(scope.groups[1]!.explanation).toBe(
      '2 partitions (region=eu/ts_day=2026-01-05, region=eu/ts_day=2026-01-01): 20 small files, 3 delete files',
    );
  });

  it('a partition larger than the bound is a task of its own', () => {
    const big = day('2026-01-09', 1, { smallFileBytes: 5 * GiB });
    const scope = partitionScope(
      partitioned([big, day('2026-01-08', 2)]),
      policyOf({ 'icepack.max-bytes-per-task': '2GiB' }),
      now,
    );
    expect(texts(scope)).toEqual([['2026-01-09'], ['2026-01-08']]);
  });

  it(`keeps at most ${MAX_TASK_GROUPS} tasks; the oldest partitions wait and the reason says so`, () => {
    const many = Array.from({ length: 10 }, (_, i) =>
      day(`2026-01-0${i}`.replace('2026-01-00', '2025-12-31'), i + 1),
    );
    const scope = partitionScope(
      partitioned(many),
      policyOf({ 'icepack.max-bytes-per-task': '1GiB' }),
      now,
    );
    expect(scope.groups).toHaveLength(MAX_TASK_GROUPS);
    expect(scope.leftOut).toBe(10 - MAX_TASK_GROUPS);
    expect(scope.reason).toContain(`${10 - MAX_TASK_GROUPS} older ones wait for a later plan`);
  });

  it('turns on partial progress for a task that rewrites much or a table with row-level deletes', () => {
    expect(partialProgressFor(PARTIAL_PROGRESS_ABOVE_BYTES)).toBeUndefined();
    expect(partialProgressFor(PARTIAL_PROGRESS_ABOVE_BYTES + 1)).toEqual({
      enabled: true,
      maxCommits: 10,
    });
    expect(partialProgressFor(1_000, true)).toEqual({ enabled: true, maxCommits: 10 });
  });
});

describe('partitionPredicates', () => {
  const state = partitioned(days);
  const specs = new Map([
    [1, state.partitionSpec],
    [0, state.otherPartitionSpecs![0]!],
  ]);
  it('writes identity fields as column equality and other transforms with the transform', () => {
    expect(partitionPredicates(day('2026-01-05', 5), specs)).toEqual([
      { column: 'region', value: 'eu' },
      { column: 'ts', transform: 'day', value: '2026-01-05' },
    ]);
  });
  it('uses the spec the partition was written with (evolved specs) and keeps null values', () => {
    const old: PartitionState = { ...day('x', 9), specId: 0, partition: { region: null } };
    expect(partitionPredicates(old, specs)).toEqual([{ column: 'region', value: null }]);
  });
  it('cannot write a filter for an unknown spec or a dropped source column', () => {
    expect(partitionPredicates({ ...day('x', 1), specId: 7 }, specs)).toBeNull();
    const dropped = new Map([
      [1, { specId: 1, fields: [{ ...state.partitionSpec.fields[0]!, column: undefined }] }],
    ]);
    expect(partitionPredicates(day('x', 1), dropped)).toBeNull();
  });
});

describe('planTable with partition groups', () => {
  const props = { 'icepack.max-bytes-per-task': '2GiB' };
  function plan(state: TableState, merge: (PendingTask | undefined)[] = []) {
    const { policy } = resolvePolicy(props);
    const pending = merge.some((p) => p?.status === 'active')
      ? { merge: { status: 'active' as const } }
      : merge.some((p) => p !== undefined)
        ? { merge: { status: 'waiting' as const } }
        : {};
    return planTable({ state, policy, pending, groupsPending: { merge }, now });
  }
  const merges = (decisions: readonly TaskDecision[]) =>
    decisions
      .filter((d) => d.type === 'merge')
      .map((d) => [d.taskId.replace(/^.*orders/, ''), d.action]);

  it('creates one valid task per group, each with its own filter, score and explanation', () => {
    const p = plan(partitioned(days));
    expect(merges(p.decisions)).toEqual([
      ['', 'create'],
      ['#2', 'create'],
    ]);
    const [first, second] = p.decisions
      .filter((d) => d.type === 'merge')
      .map((d) => taskSchema.parse(d.task));
    expect(first!.type === 'merge' && first!.parameters.partitionSets).toEqual([
      {
        fields: [{ column: 'region' }, { column: 'ts', transform: 'day' }],
        values: [
          ['eu', '2026-01-09'],
          ['eu', '2026-01-07'],
        ],
      },
    ]);
    expect(
      first!.type === 'merge' && expandPartitionSets(first!.parameters.partitionSets!),
    ).toEqual([
      [
        { column: 'region', value: 'eu' },
        { column: 'ts', transform: 'day', value: '2026-01-09' },
      ],
      [
        { column: 'region', value: 'eu' },
        { column: 'ts', transform: 'day', value: '2026-01-07' },
      ],
    ]);
    expect(first!.state.bytesToRewrite).toBe(2 * GiB);
    // Each scored on its own figures, not the table's 200 small files.
    const parts = (t: typeof first) =>
      Object.fromEntries(t!.score.parts.map((x) => [x.factor, x.value]));
    expect(parts(first)).toMatchObject({ 'small-files': 40, 'delete-files': 0 });
    expect(parts(second)).toMatchObject({ 'small-files': 20, 'delete-files': 3 });
    expect(first!.score.total).toBe(1100);
    expect(p.decisions.find((d) => d.taskId.endsWith('#2'))!.reason).toContain(
      '2 partitions (region=eu/ts_day=2026-01-05, region=eu/ts_day=2026-01-01)',
    );
  });

  it('updates waiting groups, creates missing ones and removes groups the plan no longer has', () => {
    const waiting = { status: 'waiting' as const, createdAt: '2026-01-09T00:00:00.000Z' };
    const p = plan(partitioned(days), [waiting, undefined, waiting]);
    expect(merges(p.decisions)).toEqual([
      ['', 'update'],
      ['#2', 'create'],
      ['#3', 'remove'],
    ]);
    expect(p.decisions.find((d) => d.taskId.endsWith('#3'))!.reason).toBe(
      'no longer needed: the plan has 2 tasks',
    );
  });

  it('touches nothing while any group of the type runs', () => {
    const p = plan(partitioned(days), [undefined, { status: 'active' }]);
    expect(merges(p.decisions)).toEqual([['', 'none']]);
  });

  it('plans no merge when the small files are spread thin over partitions, and says why', () => {
    const p = plan(partitioned(thinDays));
    expect(merges(p.decisions)).toEqual([['', 'none']]);
    const merge = p.decisions.find((d) => d.type === 'merge')!;
    expect(merge.reason).toBe(
      "files spread thin: none of the 26 partitions with small or delete files has ≥ 5 small files, a delete file or a target file's worth of small files, so a rewrite would change nothing",
    );
    // A waiting merge planned before is removed, with the same reason.
    const removed = plan(partitioned(thinDays), [{ status: 'waiting' }]);
    expect(merges(removed.decisions)).toEqual([['', 'remove']]);
  });

  it('still merges the whole table when thin partitions are not all listed, or one holds enough', () => {
    const unlisted = partitioned(thinDays);
    const partial = plan({
      ...unlisted,
      partitionTotals: { partitions: 400, needingWork: 400, listed: 26 },
    });
    expect(merges(partial.decisions)).toEqual([['', 'create']]);
    const enough = thinDays.map((p, i) =>
      i === 0 ? { ...p, dataFiles: 3, smallFiles: 3, smallFileBytes: 600 * MiB } : p,
    );
    expect(merges(plan(partitioned(enough)).decisions)).toEqual([['', 'create']]);
  });

  it('removes every waiting group when the table no longer needs a merge', () => {
    const healthy = { ...partitioned(days), newData: { ...partitioned(days).newData, files: 0 } };
    const waiting = { status: 'waiting' as const };
    const p = plan({ ...healthy, files: { ...healthy.files, smallFiles: 0 } }, [waiting, waiting]);
    expect(merges(p.decisions)).toEqual([
      ['', 'remove'],
      ['#2', 'remove'],
    ]);
  });
});

// Session 15: merges that Iceberg would turn into a no-op. Iceberg 1.10's bin-pack planner
// (SizeBasedFileRewritePlanner / BinPackRewriteFilePlanner) works per partition of the current
// spec: a file is a candidate when it is below min-file-size (a small file), above
// max-file-size, or has ≥ delete-file-threshold deletes; a partition's candidates are rewritten
// when there are > 1 of them and ≥ min-input-files, or > 1 and more bytes than the target, or
// more bytes than max-file-size, or one has too many deletes. Otherwise the task runs Spark and
// changes nothing. This oracle applies those rules to a partition's figures and a task's options.
describe('no planned merge is one Iceberg would not act on', () => {
  type MergeTask = Extract<Task, { type: 'merge' }>;
  function icebergRewrites(p: PartitionState, task: MergeTask): boolean {
    const o = task.parameters;
    const small = p.smallFiles;
    return (
      (small > 1 && small >= o.minInputFiles) ||
      (small > 1 && (p.smallFileBytes ?? 0) > o.targetFileSizeBytes) ||
      p.deleteFiles >= o.deleteFileThreshold
    );
  }
  /** The merge decisions that create a task, each with the listed partitions its task covers. */
  function mergesOf(p: TablePlan, state: TableState) {
    return p.decisions
      .filter((d) => d.type === 'merge' && d.action === 'create')
      .map((d) => {
        const task = d.task as MergeTask;
        const sets = task.parameters.partitionSets;
        const covered =
          sets === undefined
            ? state.partitions
            : (p.scope.groups.find((g) => g.group === d.group)?.partitions ?? []);
        return { d, task, covered };
      });
  }
  const planOf = (state: TableState, props: Record<string, string>) =>
    planTable({ state, policy: resolvePolicy(props).policy, pending: {}, now });
  const everyTen = { 'icepack.merge.max-commits': '10' };
  /** A partitioned table below the table's small-file threshold (9 ≤ 20), 10 commits since its last rewrite. */
  const afterCommits = (partitions: PartitionState[], smallFiles: number) => {
    const base = partitioned(partitions);
    return {
      ...base,
      files: { ...base.files, smallFiles, smallFileBytes: smallFiles * MiB },
      snapshots: { ...base.snapshots, sinceLastRewrite: 10 },
    };
  };
  const small = (n: number) => ({ dataFiles: n, smallFiles: n, smallFileBytes: n * MiB });

  it('max-commits below the file thresholds: the merge carries a min-input-files Iceberg acts on', () => {
    const parts = [
      day('2026-01-09', 1, small(3)),
      day('2026-01-08', 2, small(3)),
      day('2026-01-07', 3, small(3)),
    ];
    const state = afterCommits(parts, 9);
    const p = planOf(state, everyTen);
    const merges = mergesOf(p, state);
    expect(merges.length, JSON.stringify(p.decisions.map((d) => d.reason))).toBeGreaterThan(0);
    for (const m of merges) {
      // The commits' small files: every partition with ≥ 2 of them is rewritten.
      expect(m.covered.map((x) => x.partition['ts_day'])).toEqual([
        '2026-01-09',
        '2026-01-08',
        '2026-01-07',
      ]);
      expect(m.covered.every((x) => icebergRewrites(x, m.task))).toBe(true);
      expect(m.task.parameters.minInputFiles).toBe(2);
      expect(m.d.reason).toContain('min-input-files 2 instead of 5');
    }
  });

  it('max-commits on an unpartitioned table: min-input-files lowered to 2, or no merge for one small file', () => {
    const state = (n: number) =>
      tableState(
        { smallFiles: n, newDataFiles: n },
        {
          partitionSpec: { specId: 0, fields: [] },
          partitions: [],
          snapshots: { ...tableState().snapshots, sinceLastRewrite: 10 },
        },
      );
    const three = mergesOf(planOf(state(3), everyTen), state(3));
    expect(three.map((m) => m.task.parameters.minInputFiles)).toEqual([2]);
    const one = planOf(state(1), everyTen).decisions.filter((d) => d.type === 'merge');
    expect(one.map((d) => d.action)).toEqual(['none']);
    expect(one[0]!.reason).toMatch(/would change nothing/);
  });

  it('max-commits with one small file per partition: no merge, and the reason says why', () => {
    const parts = Array.from({ length: 9 }, (_, i) => day(`2026-01-0${i + 1}`, 9 - i, small(1)));
    const state = afterCommits(parts, 9);
    const p = planOf(state, everyTen);
    expect(mergesOf(p, state)).toEqual([]);
    const merge = p.decisions.find((d) => d.type === 'merge')!;
    expect(merge.action).toBe('none');
    expect(merge.reason).toMatch(/^files spread thin: .* ≥ 2 small files/);
  });

  it.each([
    ['recent:2', { 'icepack.merge.strategy': 'recent:2' }],
    ['selected', { 'icepack.merge.strategy': 'selected:ts_day=2026-01-09;ts_day=2026-01-08' }],
  ])("the %s fallback plans no partition below Iceberg's thresholds", (_, props) => {
    // The table's 200 small files fire the merge; the strategy's partitions hold 3 and 1 small
    // files of a few MiB (below min-input-files 5, below one target file): Iceberg skips both.
    const parts = [
      day('2026-01-09', 1, small(3)),
      day('2026-01-08', 2, small(1)),
      day('2026-01-01', 9), // 20 small files, but outside the strategy
    ];
    const state = partitioned(parts);
    const p = planOf(state, props);
    expect(mergesOf(p, state)).toEqual([]);
    const merge = p.decisions.find((d) => d.type === 'merge')!;
    expect(merge.reason).toMatch(/would change nothing/);
    // A waiting merge planned before is removed, with the reason.
    const waiting = planTable({
      state,
      policy: resolvePolicy(props).policy,
      pending: { merge: { status: 'waiting' } },
      now,
    });
    const removed = waiting.decisions.filter((d) => d.type === 'merge');
    expect(removed.map((d) => [d.action, d.removal])).toEqual([['remove', 'skipped']]);
    expect(removed[0]!.reason).toMatch(/^no longer needed: .*would change nothing/);
  });

  it('the recent fallback keeps a partition Iceberg rewrites for its bytes, and max-commits lowers min-input-files there too', () => {
    const parts = [
      day('2026-01-09', 1, { dataFiles: 2, smallFiles: 2, smallFileBytes: 600 * MiB }),
      day('2026-01-08', 2, small(1)),
    ];
    const bytes = mergesOf(
      planOf(partitioned(parts), { 'icepack.merge.strategy': 'recent:2' }),
      partitioned(parts),
    );
    expect(bytes.flatMap((m) => m.covered.map((x) => x.partition['ts_day']))).toEqual([
      '2026-01-09',
    ]);
    expect(bytes.every((m) => m.covered.every((x) => icebergRewrites(x, m.task)))).toBe(true);

    const committed = afterCommits(
      [day('2026-01-09', 1, small(3)), day('2026-01-08', 2, small(1))],
      4,
    );
    const m = mergesOf(
      planOf(committed, { ...everyTen, 'icepack.merge.strategy': 'recent:2' }),
      committed,
    );
    expect(m.flatMap((x) => x.covered.map((c) => c.partition['ts_day']))).toEqual(['2026-01-09']);
    expect(m.map((x) => x.task.parameters.minInputFiles)).toEqual([2]);
  });

  it('keeps the policy min-input-files when a file threshold fired too', () => {
    const state = {
      ...partitioned(days),
      snapshots: { ...partitioned(days).snapshots, sinceLastRewrite: 10 },
    };
    const merges = mergesOf(planOf(state, everyTen), state);
    expect(merges.length).toBeGreaterThan(0);
    expect(merges.map((m) => m.task.parameters.minInputFiles)).toEqual(merges.map(() => 5));
  });
});

// Session 16 (ADR 0047): a merge fired by the commit count alone acts on what the commits
// wrote — the partitions whose last sequence number is above the last rewrite's — not on
// every older partition that holds 2–4 small files. And a sort runs Iceberg's same file
// planner (1.10's SparkShufflingDataRewritePlanner is a BinPackRewriteFilePlanner): below its
// thresholds it rewrites nothing, so a sort no file group would come of is not planned either.
describe('rewrites fired by the commit count alone act on the partitions the commits wrote', () => {
  const everyTen = { 'icepack.merge.max-commits': '10' };
  const small = (n: number, lastSequenceNumber: string) => ({
    dataFiles: n,
    smallFiles: n,
    smallFileBytes: n * MiB,
    lastSequenceNumber,
  });
  /** Below the table's small-file threshold, 10 commits since a rewrite at sequence number 100. */
  const afterRewrite = (
    partitions: PartitionState[],
    since: Partial<TableState['newData']> = { sinceSequenceNumber: '100' },
  ) => {
    const base = partitioned(partitions);
    const smallFiles = partitions.reduce((n, p) => n + p.smallFiles, 0);
    return {
      ...base,
      files: { ...base.files, smallFiles, smallFileBytes: smallFiles * MiB },
      snapshots: { ...base.snapshots, sinceLastRewrite: 10 },
      newData: { ...base.newData, sinceSnapshotId: '3051729675574597004', ...since },
    };
  };
  const planOf = (state: TableState, props: Record<string, string> = everyTen) =>
    planTable({ state, policy: resolvePolicy(props).policy, pending: {}, now });
  const covered = (p: TablePlan, type = 'merge') =>
    p.decisions
      .filter((d) => d.type === type && d.action === 'create')
      .flatMap((d) => {
        const t = d.task;
        const sets =
          t?.type === 'merge' || t?.type === 'sort' ? t.parameters.partitionSets : undefined;
        return sets === undefined
          ? ['(whole table)']
          : expandPartitionSets(sets).map((f) => String(f[1]?.value));
      });
  const parts = [
    day('2026-01-09', 1, small(3, '105')), // written by the commits
    day('2026-01-08', 2, small(2, '103')), // written by the commits
    day('2026-01-05', 5, small(4, '90')), // older: 4 small files the commits did not write
    day('2026-01-04', 6, small(2, '88')),
  ];

  it('rewrites only partitions whose last sequence number is above the last rewrite’s', () => {
    const p = planOf(afterRewrite(parts));
    expect(covered(p)).toEqual(['2026-01-09', '2026-01-08']);
    const merge = p.decisions.find((d) => d.type === 'merge')!;
    expect(merge.reason).toContain('written since the last rewrite (sequence number 100)');
    expect(merge.task?.type === 'merge' && merge.task.parameters.minInputFiles).toBe(2);
  });

  it('no partition the commits wrote holds 2 small files: no merge, though older ones do', () => {
    const p = planOf(afterRewrite([day('2026-01-09', 1, small(1, '105')), ...parts.slice(2)]));
    expect(covered(p)).toEqual([]);
    const merge = p.decisions.find((d) => d.type === 'merge')!;
    expect(merge.action).toBe('none');
    expect(merge.reason).toMatch(
      /^no partition written since the last rewrite \(sequence number 100\) the strategy all allows has ≥ 2 small files.*would change nothing/,
    );
  });

  it('a file threshold fired as well: every partition over the policy’s thresholds, as before', () => {
    const many = [...parts, day('2026-01-01', 9, small(20, '50'))];
    expect(covered(planOf(afterRewrite(many)))).toEqual(['2026-01-01']);
  });

  it('the last rewrite’s sequence number unknown (format v1, never rewritten, an older state): every partition', () => {
    const all = ['2026-01-09', '2026-01-08', '2026-01-05', '2026-01-04'];
    expect(covered(planOf({ ...afterRewrite(parts), formatVersion: 1 }))).toEqual(all);
    expect(covered(planOf(afterRewrite(parts, { sinceSnapshotId: null })))).toEqual(all);
    expect(covered(planOf(afterRewrite(parts, { sinceSequenceNumber: undefined })))).toEqual(all);
  });

  it('a sort fired by the commit count alone shares the scope', () => {
    const state = afterRewrite(parts);
    const sorting = { ...state, newData: { ...state.newData, share: 0.9 } };
    const p = planOf(sorting);
    expect(covered(p, 'sort')).toEqual(['2026-01-09', '2026-01-08']);
    expect(covered(p, 'merge')).toEqual([]);
  });
});

describe('no planned sort is one Iceberg would not act on', () => {
  const planOf = (state: TableState, props: Record<string, string> = {}) =>
    planTable({ state, policy: resolvePolicy(props).policy, pending: {}, now });
  const sortOf = (p: TablePlan) => p.decisions.filter((d) => d.type === 'sort');
  // The table-wide count fires on thinDays; new data is most of the table.
  const hot = (state: TableState): TableState => ({
    ...state,
    files: { ...state.files, smallFiles: 26 },
    newData: { ...state.newData, files: 26, share: 0.9 },
  });

  it('files spread thin: no sort (nor merge), and the reason says why', () => {
    const p = planOf(hot(partitioned(thinDays)));
    expect(sortOf(p).map((d) => d.action)).toEqual(['none']);
    expect(sortOf(p)[0]!.reason).toMatch(/^files spread thin: .*would change nothing/);
    expect(p.decisions.filter((d) => d.type === 'merge').map((d) => d.action)).toEqual(['none']);
    // A waiting sort planned before is removed.
    const waiting = planTable({
      state: hot(partitioned(thinDays)),
      policy: resolvePolicy({}).policy,
      pending: { sort: { status: 'waiting' } },
      now,
    });
    expect(
      waiting.decisions.filter((d) => d.type === 'sort').map((d) => [d.action, d.removal]),
    ).toEqual([['remove', 'skipped']]);
  });

  it('an unpartitioned table the commit count fires on with one small file: no sort', () => {
    const state = (n: number) =>
      tableState(
        { smallFiles: n, newDataFiles: n, newDataShare: 0.9 },
        {
          partitionSpec: { specId: 0, fields: [] },
          partitions: [],
          snapshots: { ...tableState().snapshots, sinceLastRewrite: 10 },
        },
      );
    const everyTen = { 'icepack.merge.max-commits': '10' };
    expect(sortOf(planOf(state(1), everyTen)).map((d) => d.action)).toEqual(['none']);
    expect(sortOf(planOf(state(1), everyTen))[0]!.reason).toMatch(/^nothing to rewrite: /);
    expect(sortOf(planOf(state(3), everyTen)).map((d) => d.action)).toEqual(['create']);
    // One file group: no partition restriction, and the reason does not claim one.
    const known = { ...state(3), newData: { ...state(3).newData, sinceSequenceNumber: '10' } };
    const sort = sortOf(planOf(known, everyTen));
    expect(sort.map((d) => d.action)).toEqual(['create']);
    expect(sort[0]!.reason).not.toContain('only partitions written since');
  });

  it('one partition holding enough: the sort is planned there', () => {
    const enough = thinDays.map((p, i) =>
      i === 0 ? { ...p, dataFiles: 6, smallFiles: 6, smallFileBytes: 30_000 } : p,
    );
    const p = planOf(hot(partitioned(enough)));
    expect(sortOf(p).map((d) => d.action)).toEqual(['create']);
  });
});
