import { taskSchema } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { gcSkip, planTable, type TaskDecision } from './plan.ts';
import { resolvePolicy } from '@icepack/policy';
import type { PendingTasks } from './rules.ts';
import { tableState } from './state-fixtures.ts';

const now = new Date('2026-01-02T00:00:00.000Z');
const MiB = 1024 * 1024;

function plan(
  state = tableState(),
  pending: PendingTasks = {},
  properties: Record<string, string> = {},
  catalog: Record<string, string> = {},
) {
  const { policy, problems } = resolvePolicy(properties, { catalog });
  const result = planTable({ state, policy, problems, pending, now });
  const by = (type: string) => result.decisions.find((d) => d.type === type) as TaskDecision;
  return {
    ...result,
    cleanup: by('cleanup'),
    merge: by('merge'),
    sort: by('sort'),
    orphans: by('orphans'),
  };
}

const needsMerge = tableState({
  smallFiles: 80,
  positionDeleteFiles: 12,
  newDataFiles: 5,
  newDataShare: 0.1,
});
const needsSort = tableState({ smallFiles: 80, newDataFiles: 60, newDataShare: 0.5 });
const needsCleanup = tableState({ snapshots: 60 });

describe('planTable', () => {
  it('creates nothing for a healthy table, and says why per type', () => {
    const p = plan();
    expect(p.decisions.map((d) => d.action)).toEqual(['none', 'none', 'none', 'none']);
    expect(p.cleanup.reason).toContain('1 snapshots ≤ 50 (not above)');
    expect(p.merge.reason).toContain('no new data since the last rewrite');
  });

  it('creates a valid cleanup task with retention from the policy', () => {
    const p = plan(
      needsCleanup,
      {},
      {
        'history.expire.max-snapshot-age-ms': '3600000',
        'icepack.history.expire.min-snapshots-to-keep': '3',
      },
    );
    expect(p.cleanup).toMatchObject({ action: 'create', reason: '60 snapshots > 50' });
    const task = taskSchema.parse(p.cleanup.task);
    expect(task).toMatchObject({
      id: 'cleanup/prod/sales/orders',
      type: 'cleanup',
      createdAt: now.toISOString(),
      parameters: { olderThan: '2026-01-01T23:00:00.000Z', retainLast: 3, retentionMs: 3_600_000 },
      // The job refuses a table under this name with another UUID (issue 16).
      state: { tableUuid: needsCleanup.tableUuid },
    });
  });

  it('creates a valid merge task with sizes from the policy and position-delete rewriting', () => {
    const p = plan(needsMerge, {}, { 'write.target-file-size-bytes': String(128 * MiB) });
    expect(p.merge.action).toBe('create');
    expect(p.merge.reason).toBe('80 small files > 20, 12 delete files > 10');
    const task = taskSchema.parse(p.merge.task);
    expect(task.parameters).toMatchObject({
      targetFileSizeBytes: 128 * MiB,
      minFileSizeBytes: 96 * MiB,
      rewritePositionDeletes: true,
    });
    expect(task.score.parts.map((x) => x.factor)).toContain('delete-files');
    expect(task.state.tableUuid).toBe(needsMerge.tableUuid);
  });

  it('measures and merges with one bound: icepack.target-file-size-bytes=128MiB alone (issue 17)', () => {
    const properties = { 'icepack.target-file-size-bytes': String(128 * MiB) };
    const measured = (bytes: number) =>
      tableState(
        { smallFiles: 80, newDataFiles: 5 },
        { files: { ...needsMerge.files, smallFiles: 80, smallFileThresholdBytes: bytes } },
      );
    const agreed = plan(measured(96 * MiB), {}, properties);
    expect(agreed.merge.task?.parameters).toMatchObject({ minFileSizeBytes: 96 * MiB });
    expect(agreed.problems).toEqual([]);
    // A state measured under the old scanner's 384 MiB: the explanation says so.
    const stale = plan(measured(384 * MiB), {}, properties);
    expect(stale.problems).toEqual([
      expect.objectContaining({
        key: 'icepack.min-file-size-bytes',
        value: String(384 * MiB),
        source: 'scan',
      }),
    ]);
  });

  it('does not rewrite position deletes when only equality deletes or small files are the reason', () => {
    expect(
      plan(tableState({ smallFiles: 80, positionDeleteFiles: 2, newDataFiles: 5 })).merge.task
        ?.parameters,
    ).toMatchObject({ rewritePositionDeletes: false });
    expect(
      plan(tableState({ equalityDeleteFiles: 20, newDataFiles: 5 })).merge.task?.parameters,
    ).toMatchObject({ rewritePositionDeletes: false });
    expect(
      plan(tableState({ deletionVectors: 20, newDataFiles: 5 })).merge.task?.parameters,
    ).toMatchObject({ rewritePositionDeletes: true });
  });

  it('commits each file group on its own on a table with row-level deletes, not on an append-only one', () => {
    // A CDC table: its writers commit deletes while it is merged (lake-sim, 2026-12-02).
    expect(plan(needsMerge).merge.task?.parameters).toMatchObject({
      partialProgress: { enabled: true, maxCommits: 10 },
    });
    expect(
      plan(tableState({ smallFiles: 80, newDataFiles: 5 })).merge.task?.parameters,
    ).not.toHaveProperty('partialProgress');
  });

  it('plans a sort instead of a merge, sorted like the table', () => {
    const p = plan(needsSort);
    expect(p.sort.action).toBe('create');
    expect(p.merge).toMatchObject({
      action: 'none',
      reason: 'sort/prod/sales/orders is planned instead: a sort also compacts',
    });
    const task = taskSchema.parse(p.sort.task);
    expect(task.parameters).toMatchObject({
      strategy: 'sort',
      columns: [{ name: 'customer_id', direction: 'asc' }],
    });
  });

  it('uses z-order columns from the policy', () => {
    const p = plan(needsSort, {}, { 'icepack.zorder.columns': 'lat,lon' });
    expect(taskSchema.parse(p.sort.task).parameters).toMatchObject({
      strategy: 'zorder',
      columns: [{ name: 'lat' }, { name: 'lon' }],
    });
  });

  it('uses Hilbert columns from the policy: a task the job takes (two columns)', () => {
    const p = plan(needsSort, {}, { 'icepack.hilbert.columns': 'lat, lon' });
    expect(taskSchema.parse(p.sort.task).parameters).toMatchObject({
      strategy: 'hilbert',
      columns: [{ name: 'lat' }, { name: 'lon' }],
    });
  });

  it('a sort replaces a waiting merge (superseded)', () => {
    const p = plan(needsSort, {
      merge: { status: 'waiting', createdAt: '2026-01-01T00:00:00.000Z' },
    });
    expect(p.sort.action).toBe('create');
    expect(p.merge).toMatchObject({ action: 'remove', removal: 'superseded' });
    expect(p.merge.reason).toMatch(/superseded by sort\/prod\/sales\/orders/);
  });

  it('no sort while the merge runs; the running merge is left alone', () => {
    const p = plan(needsSort, { merge: { status: 'active' } });
    expect(p.sort.action).toBe('none');
    expect(p.sort.reason).toMatch(/merge task is running/);
    expect(p.merge.action).toBe('none');
  });

  it('updates a waiting task from a newer state, keeping its creation time (and age)', () => {
    const createdAt = '2026-01-01T23:00:00.000Z';
    const p = plan(needsMerge, { merge: { status: 'waiting', createdAt } });
    expect(p.merge.action).toBe('update');
    expect(p.merge.task?.createdAt).toBe(createdAt);
    expect(p.merge.task?.score.parts.find((x) => x.factor === 'waiting')?.value).toBe(3_600_000);
  });

  it('never touches a running task', () => {
    const p = plan(needsMerge, { merge: { status: 'active' } });
    expect(p.merge.action).toBe('none');
    expect(p.merge.reason).toBe('a merge task is already running');
  });

  it('removes a waiting task that a newer state no longer needs (skipped)', () => {
    const p = plan(tableState(), { cleanup: { status: 'waiting' } });
    expect(p.cleanup).toMatchObject({ action: 'remove', removal: 'skipped' });
    expect(p.cleanup.reason).toMatch(/^no longer needed: .*1 snapshots ≤ 50/);
  });

  it.each([
    ['table', { 'icepack.enabled': 'false' }, {}],
    ['catalog', {}, { 'icepack.enabled': 'false' }],
  ] as const)('a paused %s gets no new tasks and loses its waiting ones', (by, table, catalog) => {
    const p = plan(needsSort, { cleanup: { status: 'waiting' } }, table, catalog);
    expect(p).toMatchObject({ paused: true, pausedBy: by });
    expect(p.decisions.map((d) => d.action)).toEqual(['remove', 'none', 'none', 'none']);
    expect(p.sort.reason).toBe(`paused: icepack.enabled=false on the ${by}; no new tasks`);
    expect(p.cleanup.removal).toBe('skipped');
  });

  it('a disabled task type gets no task', () => {
    const p = plan(needsCleanup, {}, { 'icepack.cleanup.enabled': 'false' });
    expect(p.cleanup).toMatchObject({
      action: 'none',
      reason: 'disabled: icepack.cleanup.enabled=false',
    });
  });

  it('passes policy problems through and still plans with the defaults', () => {
    const p = plan(needsCleanup, {}, { 'icepack.snapshot-threshold': 'lots' });
    expect(p.problems).toEqual([
      expect.objectContaining({ key: 'icepack.snapshot-threshold', value: 'lots' }),
    ]);
    expect(p.cleanup.action).toBe('create');
  });

  it('gc.enabled=false: no cleanup, a waiting one is dropped, and one skipped event says why', () => {
    const off = { 'gc.enabled': 'false' };
    const p = plan(needsCleanup, {}, off);
    expect(p.cleanup).toMatchObject({ action: 'none', blocked: 'gc-disabled' });
    expect(p.cleanup.reason).toMatch(/^gc\.enabled=false on the table/);
    expect(gcSkip(p, () => undefined)).toMatch(
      /^gc\.enabled=false on the table: Iceberg refuses to expire its snapshots, so no cleanup runs \(it would: 60 snapshots > 50, snapshots older than/,
    );
    // Reported once: the next state of the same table says nothing more.
    expect(gcSkip(plan(needsCleanup, {}, off), () => p)).toBeUndefined();
    // Not while there is nothing to clean up, nor when GC is on.
    // The previous state is planned only when this cleanup is held back (one plan per update).
    const notPlanned = () => {
      throw new Error('the previous state was planned');
    };
    expect(gcSkip(plan(tableState(), {}, off), notPlanned)).toBeUndefined();
    expect(gcSkip(plan(needsCleanup), notPlanned)).toBeUndefined();
    const waiting = plan(needsCleanup, { cleanup: { status: 'waiting' } }, off);
    expect(waiting.cleanup).toMatchObject({ action: 'remove', removal: 'skipped' });
    // Merges and sorts go on.
    expect(plan(needsMerge, {}, off).merge.action).toBe('create');
  });
});

describe('back-off after a task gives up', () => {
  // 3 consecutive failures, the last 10 minutes ago: a 20-minute back-off.
  const failures = {
    merge: { count: 3, lastFailedAt: '2026-01-01T23:50:00.000Z', kind: 'commit-conflict' },
  };
  const both = tableState({ snapshots: 60, smallFiles: 80, newDataFiles: 5 });
  const planAt = (at: Date, properties: Record<string, string> = {}) => {
    const { policy } = resolvePolicy(properties);
    const result = planTable({ state: both, policy, pending: {}, now: at, failures });
    const by = (type: string) => result.decisions.find((d) => d.type === type) as TaskDecision;
    return { cleanup: by('cleanup'), merge: by('merge') };
  };

  it('holds the failed type back and says why; the cleanup of the same table is planned', () => {
    const p = planAt(now);
    expect(p.merge.action).toBe('none');
    expect(p.merge.task).toBeUndefined();
    expect(p.merge.rule.blockers).toEqual([
      'the last 3 runs failed (commit-conflict); next try after 2026-01-02T00:10:00.000Z (back-off 20m for this merge, icepack.failure-backoff)',
    ]);
    expect(p.merge.reason).toContain('next try after 2026-01-02T00:10:00.000Z');
    expect(p.cleanup).toMatchObject({ action: 'create', reason: '60 snapshots > 50' });
  });

  it('plans the type again once the back-off has passed', () => {
    const p = planAt(new Date('2026-01-02T00:10:00.000Z'));
    expect(p.merge.action).toBe('create');
    expect(p.merge.rule.factors).toContainEqual(
      expect.objectContaining({
        factor: 'back-off',
        met: true,
        text: 'the last 3 runs failed (commit-conflict); the 20m back-off has passed',
      }),
    );
  });

  it('uses the table policy: icepack.failure-backoff=1m', () => {
    expect(planAt(now, { 'icepack.failure-backoff': '1m' }).merge.action).toBe('create');
  });

  it('says nothing of the back-off for a type without failures', () => {
    expect(planAt(now).cleanup.rule.factors.some((f) => f.factor === 'back-off')).toBe(false);
  });
});

describe('planTable: orphan files', () => {
  const DAY = 24 * 3600 * 1000;
  const on = { 'icepack.orphan.enabled': 'true' };

  it('plans none unless turned on, and says which key turns it on', () => {
    const p = plan();
    expect(p.orphans).toMatchObject({ action: 'none', blocked: 'disabled' });
    expect(p.orphans.reason).toBe('disabled: icepack.orphan.enabled is not true (off by default)');
  });

  it('creates a task on a table never cleaned of orphans, cutoff and window from the policy', () => {
    const p = plan(tableState(), {}, { 'icepack.orphan.min-age': '4d' }, on);
    expect(p.orphans.action).toBe('create');
    expect(p.orphans.reason).toBe('no orphans has succeeded on the table yet');
    const task = taskSchema.parse(p.orphans.task);
    expect(task).toMatchObject({
      id: 'orphans/prod/sales/orders',
      type: 'orphans',
      parameters: {
        olderThan: new Date(now.getTime() - 4 * DAY).toISOString(),
        quarantineWindowMs: 7 * DAY,
        maxFiles: 10_000,
      },
      state: { bytesToRewrite: 0 },
    });
    // Scored below every other type, by the table's bytes (the reclaimable estimate).
    expect(task.score.parts.map((part) => part.factor)).toEqual([
      'base',
      'reclaimable-estimate',
      'waiting',
    ]);
  });

  it('waits for icepack.orphan.interval after the last success, and for gc.enabled', () => {
    const recent = tableState({}, { lastMaintenance: { orphans: '2025-12-30T00:00:00.000Z' } });
    const p = plan(recent, {}, {}, on);
    expect(p.orphans.action).toBe('none');
    expect(p.orphans.reason).toContain('(icepack.orphan.interval)');
    expect(plan(recent, {}, { 'icepack.orphan.interval': '1d' }, on).orphans.action).toBe('create');
    const gcOff = plan(tableState(), {}, { 'gc.enabled': 'false' }, on);
    expect(gcOff.orphans).toMatchObject({ action: 'none', blocked: 'gc-disabled' });
    const running = plan(tableState(), { orphans: { status: 'active' } }, {}, on);
    expect(running.orphans.action).toBe('none');
  });
});
