import { MAX_PRIORITY, MIN_PRIORITY } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { resolvePolicy } from '@icepack/policy';
import {
  agingPart,
  DEFAULT_SCORE_OPTIONS,
  isRunNow,
  keepRunNow,
  OVERDUE_PRIORITY,
  priorityForScore,
  runNowScore,
  scoreTask,
  withAging,
} from './score.ts';
import { tableState } from './state-fixtures.ts';

const policy = resolvePolicy({}).policy;
const o = DEFAULT_SCORE_OPTIONS;

describe('scores', () => {
  it('merge and sort start above cleanup', () => {
    const state = tableState({ snapshots: 51, smallFiles: 21, newDataFiles: 1 });
    const cleanup = scoreTask('cleanup', state, policy, 0);
    expect(scoreTask('merge', state, policy, 0).total).toBeGreaterThan(cleanup.total);
    expect(scoreTask('sort', state, policy, 0).total).toBeGreaterThan(cleanup.total);
  });

  it('cleanup rises in steps with the snapshot count', () => {
    const at = (snapshots: number) =>
      scoreTask('cleanup', tableState({ snapshots }), policy, 0).total;
    expect(at(51)).toBe(at(99)); // same step
    expect(at(100)).toBe(at(99) + o.snapshotStepPoints);
    expect(at(1000)).toBeGreaterThan(at(100));
  });

  it.each([
    [
      'small files',
      (n: number) => tableState({ smallFiles: n }),
      o.smallFileStep,
      o.smallFileStepPoints,
    ],
    [
      'delete files',
      (n: number) => tableState({ positionDeleteFiles: n }),
      o.deleteFileStep,
      o.deleteFileStepPoints,
    ],
  ] as const)('merge and sort rise in steps with %s', (_name, make, step, points) => {
    for (const type of ['merge', 'sort'] as const) {
      const at = (n: number) => scoreTask(type, make(n), policy, 0).total;
      expect(at(step - 1)).toBe(at(0));
      expect(at(step)).toBe(at(0) + points);
      expect(at(3 * step)).toBe(at(0) + 3 * points);
    }
  });

  it('deletes weigh more than small files per step', () => {
    const deletes = scoreTask('merge', tableState({ positionDeleteFiles: 20 }), policy, 0).total;
    const small = scoreTask('merge', tableState({ smallFiles: 20 }), policy, 0).total;
    expect(deletes).toBeGreaterThan(small);
  });

  it('keeps its parts, which sum to the total', () => {
    const score = scoreTask(
      'merge',
      tableState({ smallFiles: 80, positionDeleteFiles: 12 }),
      policy,
      11 * 60_000,
    );
    expect(score.parts.map((p) => p.factor)).toEqual([
      'base',
      'delete-files',
      'small-files',
      'waiting',
    ]);
    expect(score.parts.find((p) => p.factor === 'small-files')).toEqual({
      factor: 'small-files',
      value: 80,
      threshold: 20,
      points: 4 * 50,
    });
    expect(score.parts.reduce((s, p) => s + p.points, 0)).toBe(score.total);
    expect(score.priority).toBe(MAX_PRIORITY - score.total);
  });

  it('caps the steps of one factor', () => {
    const huge = scoreTask('merge', tableState({ smallFiles: 10_000_000 }), policy, 0);
    expect(huge.parts.find((p) => p.factor === 'small-files')?.points).toBe(
      o.maxSteps * o.smallFileStepPoints,
    );
  });
});

describe('aging', () => {
  it('rises with waiting time, in steps of agingStepMs', () => {
    expect(agingPart(o.agingStepMs - 1).points).toBe(0);
    expect(agingPart(o.agingStepMs).points).toBe(o.agingStepPoints);
    expect(agingPart(10 * o.agingStepMs).points).toBe(10 * o.agingStepPoints);
    expect(agingPart(-5).points).toBe(0); // clock skew never lowers a score
  });

  it('lets a waiting cleanup overtake a fresh merge after (merge base - cleanup base) / rate', () => {
    const state = tableState({ snapshots: 51, smallFiles: 21, newDataFiles: 1 });
    const fresh = scoreTask('merge', state, policy, 0);
    const gap = fresh.total - scoreTask('cleanup', state, policy, 0).total;
    const overtakeMs = Math.ceil(gap / o.agingStepPoints + 1) * o.agingStepMs;
    expect(scoreTask('cleanup', state, policy, overtakeMs).priority).toBeLessThan(fresh.priority);
    expect(overtakeMs).toBeLessThanOrEqual(4 * 3600 * 1000); // documented: about 3 h with the defaults
  });

  it('withAging replaces the waiting part and keeps the others', () => {
    const score = scoreTask('cleanup', tableState({ snapshots: 120 }), policy, 0);
    const aged = withAging(score, 3 * o.agingStepMs);
    expect(aged.parts.filter((p) => p.factor === 'waiting')).toHaveLength(1);
    expect(aged.total).toBe(score.total + 3 * o.agingStepPoints);
  });

  it('uses configured step sizes and rate', () => {
    const fast = { ...o, agingStepMs: 1000, agingStepPoints: 500 };
    expect(agingPart(2500, fast).points).toBe(1000);
  });
});

describe('run now', () => {
  const waiting = scoreTask('cleanup', tableState({ snapshots: 120 }), policy, 0);
  const urgent = scoreTask(
    'merge',
    tableState({ smallFiles: 5000, positionDeleteFiles: 900 }),
    policy,
    0,
  );

  it('raises a task to the front: the highest priority, its points unchanged', () => {
    const raised = runNowScore(waiting);
    expect(raised).toMatchObject({ priority: MIN_PRIORITY, total: waiting.total });
    expect(raised.priority).toBeLessThan(urgent.priority);
    expect(isRunNow(raised)).toBe(true);
    expect(isRunNow(waiting)).toBe(false);
    expect(runNowScore(raised)).toEqual(raised); // raising twice changes nothing
  });

  it('survives aging and a re-planned score; an unraised task is re-scored as before', () => {
    const raised = runNowScore(waiting);
    expect(withAging(raised, 10 * o.agingStepMs).priority).toBe(MIN_PRIORITY);
    const next = scoreTask('cleanup', tableState({ snapshots: 200 }), policy, 0);
    expect(keepRunNow(raised, next)).toMatchObject({ priority: MIN_PRIORITY, total: next.total });
    expect(keepRunNow(waiting, next)).toEqual(next);
    expect(keepRunNow(undefined, next)).toEqual(next);
  });
});

describe('priorityForScore', () => {
  it('is monotone: a higher score never gets a later (higher) priority number', () => {
    let previous = priorityForScore(-10);
    for (let total = -10; total < 50_000; total += 7) {
      const p = priorityForScore(total);
      expect(p).toBeLessThanOrEqual(previous);
      previous = p;
    }
  });

  it('stays below the run-now and overdue tiers, within ..2,097,151, and never yields 0', () => {
    expect(priorityForScore(0)).toBe(MAX_PRIORITY);
    expect(priorityForScore(-1e9)).toBe(MAX_PRIORITY);
    expect(priorityForScore(MAX_PRIORITY + 1e9)).toBe(OVERDUE_PRIORITY + 1);
    expect(priorityForScore(MAX_PRIORITY)).toBe(OVERDUE_PRIORITY + 1);
    expect(priorityForScore(1000)).toBe(MAX_PRIORITY - 1000);
    expect(OVERDUE_PRIORITY).toBe(MIN_PRIORITY + 1);
  });
});

describe('overdue: fairness between task types and table sizes', () => {
  // The largest state points a merge can have: every factor at its step cap.
  const hugeMerge = tableState({ smallFiles: 10_000_000, positionDeleteFiles: 10_000_000 });
  const smallCleanup = tableState({ snapshots: 51 });

  it('a cleanup that waited overdueAfterMs runs before the freshest, biggest merge', () => {
    const fresh = scoreTask('merge', hugeMerge, policy, 0);
    const justBefore = scoreTask('cleanup', smallCleanup, policy, o.overdueAfterMs - 1);
    const overdue = scoreTask('cleanup', smallCleanup, policy, o.overdueAfterMs);
    expect(justBefore.priority).toBeGreaterThan(fresh.priority); // by points, the merge first
    expect(overdue.priority).toBe(OVERDUE_PRIORITY);
    expect(overdue.priority).toBeLessThan(fresh.priority);
    // By points alone (the aging rate), the cleanup would wait days.
    const gap = fresh.total - scoreTask('cleanup', smallCleanup, policy, 0).total;
    expect((gap / o.agingStepPoints) * o.agingStepMs).toBeGreaterThan(2 * 24 * 3600 * 1000);
    expect(overdue.parts).toContainEqual({
      factor: 'overdue',
      value: o.overdueAfterMs,
      threshold: o.overdueAfterMs,
      points: 0,
    });
  });

  it('overdue tasks share one priority whatever their points (creation order decides)', () => {
    const merge = scoreTask('merge', hugeMerge, policy, 2 * o.overdueAfterMs);
    const cleanup = scoreTask('cleanup', smallCleanup, policy, o.overdueAfterMs);
    expect(merge.priority).toBe(cleanup.priority);
    expect(merge.total).toBeGreaterThan(cleanup.total); // the points still explain the need
  });

  it('run now stays ahead of overdue; the aging pass makes a task overdue, once', () => {
    expect(runNowScore(scoreTask('cleanup', smallCleanup, policy, 0)).priority).toBeLessThan(
      scoreTask('cleanup', smallCleanup, policy, o.overdueAfterMs).priority,
    );
    const score = scoreTask('cleanup', smallCleanup, policy, 0);
    const aged = withAging(withAging(score, o.overdueAfterMs), o.overdueAfterMs + 1);
    expect(aged.priority).toBe(OVERDUE_PRIORITY);
    expect(aged.parts.filter((p) => p.factor === 'overdue')).toHaveLength(1);
    expect(aged.parts.filter((p) => p.factor === 'waiting')).toHaveLength(1);
  });

  it('overdueAfterMs 0 turns the tier off', () => {
    const off = { ...o, overdueAfterMs: 0 };
    const cleanup = scoreTask('cleanup', smallCleanup, policy, 100 * o.overdueAfterMs, off);
    expect(cleanup.priority).toBeGreaterThan(OVERDUE_PRIORITY);
    expect(cleanup.parts.some((p) => p.factor === 'overdue')).toBe(false);
  });
});
