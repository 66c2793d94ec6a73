import { describe, expect, it } from 'vitest';
import { resolvePolicy } from '@icepack/policy';
import { cleanupRule, mergeRule, sortRule, type PendingTasks } from './rules.ts';
import { tableState } from './state-fixtures.ts';

const policy = resolvePolicy({}).policy; // thresholds: snapshots 50, small 20, deletes 10, share 0.3
const none: PendingTasks = {};

// 2025-12-20 + 12 days: a snapshot from 2025-12-20 is past the default 5-day retention.
const now = new Date('2026-01-01T12:00:00.000Z');
const hoursAgo = (h: number): string => new Date(now.getTime() - h * 3_600_000).toISOString();

describe('cleanup: snapshots > 50 AND an expiry can remove some AND min interval AND none pending', () => {
  it.each([
    { snapshots: 49, fires: false },
    { snapshots: 50, fires: false }, // at the threshold: not above
    { snapshots: 51, fires: true },
  ])('$snapshots snapshots → fires $fires', ({ snapshots, fires }) => {
    const rule = cleanupRule(tableState({ snapshots }), policy, none, now);
    expect(rule.fires).toBe(fires);
    const factor = rule.factors.find((f) => f.factor === 'snapshots');
    expect(factor).toMatchObject({ value: snapshots, threshold: 50, met: fires });
  });

  it('not when every snapshot is inside the retention: the expiry could not remove one', () => {
    // 60 snapshots > 50, but the oldest is 4 days old: expire_snapshots would keep them all.
    const rule = cleanupRule(
      tableState({ snapshots: 60, oldestSnapshotAt: hoursAgo(4 * 24) }),
      policy,
      none,
      now,
    );
    expect(rule).toMatchObject({ fires: false, needed: false });
    expect(rule.blockers).toEqual([
      'no snapshot an expiry would remove: each is inside the 5d retention, among the last 1, or kept by a branch or tag',
    ]);
  });

  it('not when the old snapshots are only the last retainLast of the lineage', () => {
    const keep60 = resolvePolicy({ 'history.expire.min-snapshots-to-keep': '60' }).policy;
    expect(cleanupRule(tableState({ snapshots: 60 }), keep60, none, now).fires).toBe(false);
    expect(cleanupRule(tableState({ snapshots: 61 }), keep60, none, now).fires).toBe(true);
  });

  it("the main branch's own retention wins, as in Iceberg", () => {
    const state = tableState(
      { snapshots: 60 },
      {
        refs: [
          { name: 'main', type: 'branch', snapshotId: '1', maxSnapshotAgeMs: 30 * 86_400_000 },
        ],
      },
    );
    expect(cleanupRule(state, policy, none, now).fires).toBe(false);
  });

  it('old snapshots that only another branch or tag reaches are kept; unreferenced ones expire', () => {
    const base = tableState({ snapshots: 60, oldestSnapshotAt: hoursAgo(24) });
    const expiry = { mainOnly: 40, oldestMainOnlyAt: hoursAgo(24), unreferenced: 0 };
    const kept = { ...base, snapshots: { ...base.snapshots, expiry } };
    expect(cleanupRule(kept, policy, none, now).fires).toBe(false);
    const orphaned = {
      ...base,
      snapshots: {
        ...base.snapshots,
        expiry: { ...expiry, unreferenced: 3, oldestUnreferencedAt: hoursAgo(10 * 24) },
      },
    };
    expect(cleanupRule(orphaned, policy, none, now).fires).toBe(true);
  });

  it('a state without expiry figures (older scanner) goes by its oldest snapshot', () => {
    const base = tableState({ snapshots: 60 });
    const figures = { ...base.snapshots, expiry: undefined };
    expect(cleanupRule({ ...base, snapshots: figures }, policy, none, now).fires).toBe(true);
    const young = { ...base, snapshots: { ...figures, oldestAt: hoursAgo(1) } };
    expect(cleanupRule(young, policy, none, now).fires).toBe(false);
  });

  it.each([
    { succeededHoursAgo: 0.5, fires: false },
    { succeededHoursAgo: 1, fires: true }, // exactly the interval: allowed
    { succeededHoursAgo: 3, fires: true },
  ])(
    'the last cleanup succeeded $succeededHoursAgo h ago (min interval 1h) → fires $fires',
    ({ succeededHoursAgo, fires }) => {
      const state = tableState(
        { snapshots: 60 },
        { lastMaintenance: { cleanup: hoursAgo(succeededHoursAgo) } },
      );
      const rule = cleanupRule(state, policy, none, now);
      expect(rule).toMatchObject({ fires, needed: true });
      if (!fires) {
        expect(rule.blockers).toEqual([
          'the last cleanup succeeded 30m ago; the next waits until 1h have passed (icepack.cleanup.min-interval)',
        ]);
      }
    },
  );

  it('a min interval from the policy; a merge success does not hold a cleanup back', () => {
    const state = tableState(
      { snapshots: 60 },
      { lastMaintenance: { cleanup: hoursAgo(3), merge: hoursAgo(0) } },
    );
    const daily = resolvePolicy({ 'icepack.cleanup.min-interval': '1d' }).policy;
    expect(cleanupRule(state, daily, none, now).fires).toBe(false);
    expect(cleanupRule(state, policy, none, now).fires).toBe(true);
  });

  it.each(['waiting', 'active'] as const)('not while a cleanup is %s, though needed', (status) => {
    const rule = cleanupRule(tableState({ snapshots: 60 }), policy, { cleanup: { status } }, now);
    expect(rule).toMatchObject({ fires: false, needed: true });
    expect(rule.blockers).toHaveLength(1);
  });

  it('follows the policy threshold', () => {
    const strict = resolvePolicy({ 'icepack.snapshot-threshold': '5' }).policy;
    expect(cleanupRule(tableState({ snapshots: 5 }), strict, none, now).fires).toBe(false);
    expect(cleanupRule(tableState({ snapshots: 6 }), strict, none, now).fires).toBe(true);
  });
});

describe('merge: new data AND (small files > 20 OR delete files > 10) AND no pending merge', () => {
  it.each([
    { smallFiles: 19, fires: false },
    { smallFiles: 20, fires: false },
    { smallFiles: 21, fires: true },
  ])('$smallFiles small files → fires $fires', ({ smallFiles, fires }) => {
    const rule = mergeRule(tableState({ smallFiles, newDataFiles: 5 }), policy, none, now);
    expect(rule.fires).toBe(fires);
    expect(rule.factors.find((f) => f.factor === 'small-files')).toMatchObject({
      value: smallFiles,
      threshold: 20,
      met: fires,
    });
  });

  it.each([
    { kind: 'position', figures: { positionDeleteFiles: 9 }, fires: false },
    { kind: 'position', figures: { positionDeleteFiles: 10 }, fires: false },
    { kind: 'position', figures: { positionDeleteFiles: 11 }, fires: true },
    { kind: 'equality', figures: { equalityDeleteFiles: 11 }, fires: true },
    { kind: 'DV', figures: { deletionVectors: 11 }, fires: true },
    // Each delete file counts, whatever its kind: 4 + 4 + 3 = 11 > 10.
    {
      kind: 'mixed',
      figures: { positionDeleteFiles: 4, equalityDeleteFiles: 4, deletionVectors: 3 },
      fires: true,
    },
    {
      kind: 'mixed',
      figures: { positionDeleteFiles: 4, equalityDeleteFiles: 3, deletionVectors: 3 },
      fires: false,
    },
  ])('$kind deletes $figures → fires $fires', ({ figures, fires }) => {
    const rule = mergeRule(tableState({ ...figures, newDataFiles: 5 }), policy, none, now);
    expect(rule.fires).toBe(fires);
  });

  it.each([
    { newDataFiles: 0, fires: false },
    { newDataFiles: 1, fires: true },
  ])(
    '$newDataFiles new data files (with 50 small files) → fires $fires',
    ({ newDataFiles, fires }) => {
      const rule = mergeRule(tableState({ smallFiles: 50, newDataFiles }), policy, none, now);
      expect(rule.fires).toBe(fires);
      if (!fires) expect(rule.blockers).toEqual(['no new data since the last rewrite']);
    },
  );

  it('explains the factor that fired, and does not list the other side of the OR as a blocker', () => {
    const rule = mergeRule(
      tableState({ smallFiles: 80, newDataFiles: 5 }),
      policy,
      {
        merge: { status: 'waiting' },
      },
      now,
    );
    expect(
      rule.factors.filter((f) => f.met && f.threshold !== undefined).map((f) => f.text),
    ).toEqual(['80 small files > 20']);
    expect(rule.blockers).toEqual(['a merge task is already waiting']);
  });

  it('names both thresholds when neither is above', () => {
    const rule = mergeRule(
      tableState({ smallFiles: 3, positionDeleteFiles: 2, newDataFiles: 5 }),
      policy,
      none,
      now,
    );
    expect(rule.blockers).toEqual([
      '3 small files ≤ 20 (not above)',
      '2 delete files ≤ 10 (not above)',
    ]);
  });

  it.each(['waiting', 'active'] as const)('not while a merge is %s, or a sort is %s', (status) => {
    const state = tableState({ smallFiles: 50, newDataFiles: 5 });
    expect(mergeRule(state, policy, { merge: { status } }, now).fires).toBe(false);
    expect(mergeRule(state, policy, { sort: { status } }, now).fires).toBe(false);
    expect(mergeRule(state, policy, { cleanup: { status } }, now).fires).toBe(true);
  });
});

describe('merge: dangling delete files are work without new data', () => {
  const withDangling = (positionDeleteFiles: number, dangling: number) => {
    const state = tableState({ positionDeleteFiles, newDataFiles: 0 });
    return {
      ...state,
      files: {
        ...state.files,
        danglingDeletes: {
          positionDeleteFiles: dangling,
          equalityDeleteFiles: 0,
          deletionVectors: 0,
        },
      },
    };
  };

  it.each([
    { deletes: 11, dangling: 0, fires: false }, // live deletes wait for new data, as before
    { deletes: 11, dangling: 3, fires: true },
    { deletes: 10, dangling: 10, fires: false }, // not above the delete-file threshold
  ])('$deletes delete files, $dangling dangling, no new data → fires $fires', (c) => {
    const rule = mergeRule(withDangling(c.deletes, c.dangling), policy, none, now);
    expect(rule.fires).toBe(c.fires);
    if (c.fires) expect(rule.blockers).toEqual([]);
  });
});

describe('sort: merge conditions AND a sort order AND new-data share > 0.3 AND no pending sort', () => {
  const hot = { smallFiles: 50, newDataFiles: 50 };

  it.each([
    { newDataShare: 0.29, fires: false },
    { newDataShare: 0.3, fires: false },
    { newDataShare: 0.31, fires: true },
  ])('new-data share $newDataShare → fires $fires', ({ newDataShare, fires }) => {
    const rule = sortRule(tableState({ ...hot, newDataShare }), policy, none, now);
    expect(rule.fires).toBe(fires);
    expect(rule.factors.find((f) => f.factor === 'new-data-share')).toMatchObject({
      threshold: 0.3,
      met: fires,
    });
  });

  it.each([
    { smallFiles: 20, positionDeleteFiles: 10, fires: false },
    { smallFiles: 21, positionDeleteFiles: 0, fires: true },
    { smallFiles: 0, positionDeleteFiles: 11, fires: true },
  ])(
    'needs the merge conditions: $smallFiles small, $positionDeleteFiles deletes → $fires',
    ({ fires, ...figures }) => {
      const rule = sortRule(
        tableState({ ...figures, newDataFiles: 9, newDataShare: 0.5 }),
        policy,
        none,
        now,
      );
      expect(rule.fires).toBe(fires);
    },
  );

  it('needs a sort order: the table has none and the policy names none', () => {
    const rule = sortRule(
      tableState({ ...hot, newDataShare: 0.5, sorted: false }),
      policy,
      none,
      now,
    );
    expect(rule.fires).toBe(false);
    expect(rule.blockers).toEqual([
      'the table has no sort order and the policy names no sort, z-order or Hilbert columns',
    ]);
  });

  it.each([
    ['icepack.sort.columns', 'a, b desc'],
    ['icepack.zorder.columns', 'lat,lon'],
    ['icepack.hilbert.columns', 'lat,lon'],
  ])('a policy %s gives an unsorted table a sort order', (key, value) => {
    const withColumns = resolvePolicy({ [key]: value }).policy;
    expect(
      sortRule(tableState({ ...hot, newDataShare: 0.5, sorted: false }), withColumns, none, now)
        .fires,
    ).toBe(true);
  });

  it('not while a sort is pending, nor while a merge is running; a waiting merge does not block it', () => {
    const state = tableState({ ...hot, newDataShare: 0.5 });
    expect(sortRule(state, policy, { sort: { status: 'waiting' } }, now).fires).toBe(false);
    const running = sortRule(state, policy, { merge: { status: 'active' } }, now);
    expect(running.fires).toBe(false);
    expect(running.blockers[0]).toMatch(/merge task is running/);
    expect(sortRule(state, policy, { merge: { status: 'waiting' } }, now).fires).toBe(true);
  });

  it('follows the policy share', () => {
    const p = resolvePolicy({ 'icepack.sort.new-data-share': '10%' }).policy;
    expect(sortRule(tableState({ ...hot, newDataShare: 0.1 }), p, none, now).fires).toBe(false);
    expect(sortRule(tableState({ ...hot, newDataShare: 0.11 }), p, none, now).fires).toBe(true);
  });
});

describe('min interval for merge and sort: no second task right after a success', () => {
  it('a merge that succeeded 3 minutes ago holds the next merge back (default 5m)', () => {
    const state = tableState(
      { smallFiles: 50, newDataFiles: 5 },
      { lastMaintenance: { merge: hoursAgo(3 / 60) } },
    );
    const rule = mergeRule(state, policy, none, now);
    expect(rule).toMatchObject({ fires: false, needed: true });
    expect(rule.blockers).toEqual([
      'the last merge succeeded 3m ago; the next waits until 5m have passed (icepack.merge.min-interval)',
    ]);
    expect(
      mergeRule(state, resolvePolicy({ 'icepack.merge.min-interval': '0' }).policy, none, now)
        .fires,
    ).toBe(true);
  });

  it('a sort that succeeded 20 minutes ago holds the next sort back (default 1h)', () => {
    const state = tableState(
      { smallFiles: 50, newDataFiles: 50, newDataShare: 0.5 },
      { lastMaintenance: { sort: hoursAgo(1 / 3) } },
    );
    expect(sortRule(state, policy, none, now)).toMatchObject({ fires: false, needed: true });
    const p = resolvePolicy({ 'icepack.sort.min-interval': '15m' }).policy;
    expect(sortRule(state, p, none, now).fires).toBe(true);
  });
});

describe('merge: icepack.merge.max-commits triggers a merge after N commits (issue 17 point 3)', () => {
  const everyTen = resolvePolicy({ 'icepack.merge.max-commits': '10' }).policy;
  // Below both file thresholds: 3 small files ≤ 20, no deletes.
  const after = (commits: number, newDataFiles = 3) =>
    tableState(
      { smallFiles: 3, newDataFiles },
      {
        snapshots: {
          ...tableState().snapshots,
          sinceLastRewrite: commits,
        },
      },
    );

  it.each([
    { commits: 9, fires: false },
    { commits: 10, fires: true }, // at least N
    { commits: 25, fires: true },
  ])('$commits commits since the last rewrite → fires $fires', ({ commits, fires }) => {
    const rule = mergeRule(after(commits), everyTen, none, now);
    expect(rule.fires).toBe(fires);
    expect(rule.factors.find((f) => f.factor === 'commits')).toMatchObject({
      value: commits,
      threshold: 10,
      met: fires,
    });
    if (fires) expect(rule.blockers).toEqual([]);
  });

  it('needs new data, like the file triggers', () => {
    expect(mergeRule(after(30, 0), everyTen, none, now).fires).toBe(false);
  });

  it('is off unless set: the same table without the key gets no merge and no commits factor', () => {
    const rule = mergeRule(after(1000), policy, none, now);
    expect(rule.fires).toBe(false);
    expect(rule.factors.some((f) => f.factor === 'commits')).toBe(false);
  });

  it('the result carries the work it judged: whether the commit count alone fired (one judgement per state)', () => {
    expect(mergeRule(after(10), everyTen, none, now).work).toMatchObject({
      needed: true,
      commitsAlone: true,
    });
    // A file threshold met too: not the commit count alone.
    const many = tableState(
      { smallFiles: 50, newDataFiles: 3 },
      { snapshots: { ...tableState().snapshots, sinceLastRewrite: 10 } },
    );
    expect(mergeRule(many, everyTen, none, now).work.commitsAlone).toBe(false);
    expect(mergeRule(after(9), everyTen, none, now).work.commitsAlone).toBe(false);
    // The sort rule takes that work instead of judging it again.
    const work = mergeRule(after(10), everyTen, none, now).work;
    const sorted = tableState(
      { smallFiles: 3, newDataFiles: 3, newDataShare: 0.9 },
      { snapshots: { ...tableState().snapshots, sinceLastRewrite: 10 } },
    );
    expect(sortRule(sorted, everyTen, none, now, work).fires).toBe(true);
  });

  it('refuses 0 or a non-number, naming the key', () => {
    const { policy: p, problems } = resolvePolicy({ 'icepack.merge.max-commits': '0' });
    expect(p.mergeMaxCommits).toBeNull();
    expect(problems[0]).toMatchObject({ key: 'icepack.merge.max-commits', value: '0' });
  });
});
