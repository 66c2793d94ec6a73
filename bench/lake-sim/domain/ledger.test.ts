import type { HealthFigures, SessionTail, TaskEvent } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import {
  applicationCosts,
  duplicateRuns,
  falseLosses,
  icepackCoreSeconds,
  sessionTails,
  summarizeTasks,
  taskRows,
  taskTime,
} from './ledger.ts';
import type { TaskRow } from './ledger.ts';
import type { Launch } from './ledger.ts';

const table = { catalog: 'sim1', namespace: ['lake'], name: 'stream_00' };
const figures = (over: Partial<HealthFigures> = {}): HealthFigures => ({
  dataFiles: 30,
  smallFiles: 28,
  deleteFiles: 0,
  snapshots: 12,
  bytes: 90_000,
  ...over,
});

function ev(status: TaskEvent['status'], at: number, over: Partial<TaskEvent> = {}): TaskEvent {
  return {
    taskId: 'merge/sim1/lake/stream_00',
    table,
    taskType: 'merge',
    status,
    at: new Date(Date.UTC(2026, 0, 1, 12, 0, at)).toISOString(),
    ...over,
  };
}

describe('taskRows', () => {
  it('makes one row per run with queue wait, run time and requested core-seconds', () => {
    const rows = taskRows(
      [
        ev('planned', 0),
        ev('started', 10, { runId: 'r-a1', attempt: 1, before: figures() }),
        ev('succeeded', 40, {
          runId: 'r-a1',
          attempt: 1,
          before: figures(),
          after: figures({ dataFiles: 2, smallFiles: 2, snapshots: 13 }),
        }),
      ],
      2,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      runId: 'r-a1',
      table: 'lake.stream_00',
      type: 'merge',
      queueWaitMs: 10_000,
      runMs: 30_000,
      coreSecondsRequested: 60,
      outcome: 'succeeded',
      wasted: false,
    });
  });

  it('makes one row per task of a batch: its tasks share the run id, each has its own end', () => {
    const other = { ...table, name: 'stream_01' };
    const b = { runId: 'batch-abc-a1', attempt: 1 };
    const second = { taskId: 'merge/sim1/lake/stream_01', table: other, ...b };
    const rows = taskRows(
      [
        ev('started', 10, b),
        ev('started', 10, second),
        ev('succeeded', 40, b),
        ev('failed', 50, {
          ...second,
          error: { kind: 'conflict', message: 'x', retryable: false },
        }),
      ],
      2,
    );
    expect(rows.map((r) => [r.table, r.outcome, r.runMs])).toEqual([
      ['lake.stream_00', 'succeeded', 30_000],
      ['lake.stream_01', 'failed', 40_000],
    ]);
  });

  it('takes the cost from the succeeded event’s ledger when it carries one', () => {
    const rows = taskRows(
      [
        ev('started', 10, { runId: 'r-a1', attempt: 1 }),
        ev('succeeded', 40, {
          runId: 'r-a1',
          attempt: 1,
          cost: {
            runMs: 29_000,
            coreSecondsRequested: 58,
            coreSecondsUsed: 41,
            bytesRead: 900,
            bytesWritten: 300,
            filesRewritten: 7,
          },
        }),
      ],
      2,
    );
    expect(rows[0]).toMatchObject({
      runMs: 30_000,
      coreSecondsRequested: 58,
      coreSecondsUsed: 41,
      bytesRead: 900,
      bytesWritten: 300,
      filesRewritten: 7,
    });
    expect(summarizeTasks(rows)).toMatchObject({
      coreSecondsRequested: 58,
      coreSecondsUsed: 41,
      bytesRead: 900,
      bytesWritten: 300,
    });
  });

  it('calls a succeeded run that changed no file and no snapshot wasted', () => {
    const same = figures({ snapshots: 60 });
    const rows = taskRows(
      [
        ev('planned', 0, { taskType: 'cleanup', taskId: 'cleanup/x' }),
        ev('started', 1, { taskType: 'cleanup', taskId: 'cleanup/x', runId: 'c-a1' }),
        ev('succeeded', 9, {
          taskType: 'cleanup',
          taskId: 'cleanup/x',
          runId: 'c-a1',
          before: same,
          after: { ...same, bytes: 1 },
        }),
      ],
      2,
    );
    expect(rows.map((r) => r.wasted)).toEqual([true]);
  });

  it('keeps a run without an end as running, and a failed one as not wasted', () => {
    const rows = taskRows(
      [
        ev('started', 1, { runId: 'r-a1', attempt: 1 }),
        ev('retrying', 5, {
          runId: 'r-a1',
          attempt: 1,
          before: figures(),
          after: figures(),
          error: { kind: 'lost', message: 'gone', retryable: true },
        }),
        ev('started', 20, { runId: 'r-a2', attempt: 2 }),
      ],
      2,
    );
    expect(rows.map((r) => [r.runId, r.outcome, r.wasted])).toEqual([
      ['r-a1', 'retrying', false],
      ['r-a2', 'running', false],
    ]);
    expect(rows[1]!.queueWaitMs).toBe(15_000);
    expect(summarizeTasks(rows)).toMatchObject({ runs: 2, byOutcome: { retrying: 1, running: 1 } });
  });
});

const launch = (over: Partial<Launch>): Launch => ({
  taskId: 'merge/sim1/lake/stream_00',
  runId: 'r-a1',
  taskRun: 'merge/sim1/lake/stream_00@1',
  attempt: 1,
  startedAt: 1_000,
  ...over,
});

describe('duplicateRuns', () => {
  it('finds nothing for one launch per attempt, one after the other', () => {
    const launches = [
      launch({ endedAt: 50_000, ok: false }),
      launch({ runId: 'r-a2', attempt: 2, startedAt: 60_000, endedAt: 90_000, ok: true }),
    ];
    expect(duplicateRuns(launches)).toEqual([]);
  });

  it('finds a second attempt launched while the first still ran, both succeeding', () => {
    const launches = [
      launch({ endedAt: 52_000, ok: true }),
      launch({ runId: 'r-a2', attempt: 2, startedAt: 2_000, endedAt: 60_000, ok: true }),
    ];
    const found = duplicateRuns(launches);
    expect(found).toHaveLength(2);
    expect(found[0]).toMatch(/run r-a2 launched while run r-a1 still ran/);
    expect(found[1]).toMatch(/succeeded in 2 Spark runs: r-a1, r-a2/);
  });

  it('finds one run id launched twice', () => {
    expect(duplicateRuns([launch({}), launch({ startedAt: 3_000 })])).toContainEqual(
      'run r-a1 launched 2 times',
    );
  });

  it('finds nothing for a task planned again after its last attempt failed', () => {
    // Lake-sim, 2026-12-02: merge/…/cdc_05 failed its three attempts (commit conflicts) and
    // was planned again; the new instance's attempt 1 is a new run, not a duplicate.
    const launches = [
      launch({ runId: 'x-a1', taskRun: 'merge@1', endedAt: 50_000, ok: false }),
      launch({
        runId: 'x-a2',
        taskRun: 'merge@1',
        attempt: 2,
        startedAt: 60_000,
        endedAt: 90_000,
        ok: false,
      }),
      launch({ runId: 'y-a1', taskRun: 'merge@2', startedAt: 200_000, endedAt: 260_000, ok: true }),
    ];
    expect(duplicateRuns(launches)).toEqual([]);
  });
});

describe('falseLosses', () => {
  it('names a run reported lost whose job wrote a result', () => {
    const lost = ev('retrying', 5, {
      runId: 'r-a1',
      error: { kind: 'lost', message: 'the Spark job ended without a result', retryable: true },
    });
    expect(falseLosses([lost], [launch({ ok: true, endedAt: 50_000 })])).toHaveLength(1);
    expect(falseLosses([lost], [launch({})])).toEqual([]);
  });
});

describe('applicationCosts', () => {
  const row = (runId: string, taskId: string, coreSecondsRequested?: number): TaskRow => ({
    taskId,
    table: taskId,
    type: 'merge',
    runId,
    attempt: 1,
    startedAt: 0,
    outcome: 'succeeded',
    wasted: false,
    ...(coreSecondsRequested === undefined ? {} : { coreSecondsRequested }),
  });

  it('charges each application its costliest task as the start and counts the rest apart', () => {
    const rows = [
      // A batch of three: its `started` events came in list order, the session start was paid
      // by the task that ran first (the costliest), not the first started.
      row('batch-1-a1', 'a', 4),
      row('batch-1-a1', 'b', 70),
      row('batch-1-a1', 'c', 6),
      row('merge-2-a1', 'd', 60),
      row('merge-3-a1', 'e'),
    ];
    expect(applicationCosts(rows)).toEqual({
      applications: 3,
      batches: 1,
      startersRequested: 130,
      othersRequested: 10,
      others: 2,
    });
  });
});

describe('sessionTails and icepackCoreSeconds', () => {
  const tail = (runId: string, coreSeconds: number, at = 40): SessionTail => ({
    taskId: 'merge/sim1/lake/stream_00',
    table,
    taskType: 'merge',
    runId,
    at: new Date(Date.UTC(2026, 0, 1, 12, 0, at)).toISOString(),
    idleMs: coreSeconds * 1000,
    cost: { runMs: coreSeconds * 1000, coreSecondsRequested: coreSeconds },
  });
  const events = [
    ev('started', 0, { runId: 'batch-a1' }),
    ev('succeeded', 10, {
      runId: 'batch-a1',
      cost: { runMs: 10_000, coreSecondsRequested: 30 },
      before: figures(),
      after: figures({ dataFiles: 2, smallFiles: 0, snapshots: 13 }),
    }),
  ];

  it('adds each session’s idle tail to the compute once, and to no task: not a run, not wasted', () => {
    // The dispatcher reported the first session's tail twice (killed after it, restarted).
    const tails = [tail('batch-a1', 45), tail('batch-a1', 45, 50), tail('batch-b1', 15)];
    const rows = taskRows(events, 3);
    expect(sessionTails(tails)).toEqual({ sessions: 2, coreSecondsRequested: 60 });
    expect(icepackCoreSeconds(rows, tails)).toBe(90);
    expect(icepackCoreSeconds(rows, [])).toBe(30);
    // The runs and their invariants are the task events' alone.
    expect(summarizeTasks(rows)).toMatchObject({ runs: 1, wasted: 0, coreSecondsRequested: 30 });
  });
});

describe("Icepack's work in cron's terms (issue 15)", () => {
  it("sums the tasks' own times × cores, and again without each application's longest", () => {
    const t = taskTime(
      [
        // A session: its first task carries the start.
        { runId: 'batch-a', durationsMs: [30_000, 1_000, 2_000] },
        // A single run: its one task is its longest, so nothing of it is warm.
        { runId: 'single-b', durationsMs: [20_000] },
        // A run that wrote no result counts nothing.
        { runId: 'lost-c', durationsMs: [] },
      ],
      2,
    );
    expect(t).toEqual({
      applications: 2,
      tasks: 4,
      coreSeconds: 106,
      warmTasks: 2,
      warmCoreSeconds: 6,
    });
  });
});
