import { sampleMergeTask, sampleTableId, tableKey, type Task } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import {
  appendRoom,
  leaderReportedAtResult,
  RESIDENT_OFF,
  residentOn,
  selectAppend,
  sessionCloseBy,
  sessionReserveMs,
  taskEstimateMs,
  timeRoom,
  type LiveSession,
  type SessionTime,
} from './resident-session.ts';

const GiB = 2 ** 30;

function merge(name: string, bytes = 1_000, catalog = 'prod'): Task {
  const task = sampleMergeTask({ table: sampleTableId({ catalog, name }) });
  return { ...task, state: { ...task.state, bytesToRewrite: bytes } };
}

function session(over: Partial<LiveSession> = {}): LiveSession {
  return { catalog: 'prod', taken: 1, maxTasks: 100, busyTables: new Set(), ...over };
}

describe('residentOn', () => {
  it('is off without settings, at an idle bound of 0 (the default) and with no task room', () => {
    expect(residentOn(undefined)).toBe(false);
    expect(residentOn(RESIDENT_OFF)).toBe(false);
    expect(residentOn({ idleSeconds: 60, maxTasks: 0 })).toBe(false);
    expect(residentOn({ idleSeconds: 60, maxTasks: 100 })).toBe(true);
  });
});

describe('selectAppend', () => {
  it('takes small tasks of the session catalog in queue order, one per table', () => {
    const tasks = [merge('a'), merge('big', 2 * GiB), merge('x', 1_000, 'other'), merge('b')];
    expect(selectAppend(session(), tasks).map((t) => t.table.name)).toEqual(['a', 'b']);
  });

  it('passes over a table whose task in the session has not ended, and a table twice', () => {
    const busy = merge('a');
    const tasks = [merge('a'), merge('b'), { ...merge('b'), id: 'merge/other-id' }, merge('c')];
    expect(
      selectAppend(session({ busyTables: new Set([tableKey(busy.table)]) }), tasks).map(
        (t) => t.table.name,
      ),
    ).toEqual(['b', 'c']);
  });

  it('takes no more than the session has room for, nor more than one batch at a time', () => {
    const tasks = ['a', 'b', 'c', 'd'].map((name) => merge(name));
    expect(selectAppend(session({ taken: 98 }), tasks)).toHaveLength(2);
    expect(selectAppend(session({ taken: 100 }), tasks)).toEqual([]);
    expect(selectAppend(session(), tasks, { maxTasks: 3 })).toHaveLength(3);
  });
});

describe('the session time (ADR 0046)', () => {
  const MIN = 60_000;

  it('reserves 5 % of the task timeout, at least 30 s, and closes that long before the kill', () => {
    expect(sessionReserveMs(6 * 60 * MIN)).toBe(18 * MIN);
    expect(sessionReserveMs(5 * MIN)).toBe(30_000);
    expect(sessionCloseBy(1_000_000, 5 * MIN)).toBe(1_000_000 + 5 * MIN - 30_000);
    // A timeout under the reserve: closed from the launch on.
    expect(sessionCloseBy(1_000_000, 20_000)).toBeLessThan(1_000_000);
  });

  // Launched at 0 with a 5-minute timeout: it closes at 270 s, a task is judged 30 s at least.
  function time(over: Partial<SessionTime> = {}): SessionTime {
    return {
      closeBy: sessionCloseBy(0, 5 * MIN),
      reserveMs: sessionReserveMs(5 * MIN),
      longestTaskMs: 0,
      lastEndAt: 0,
      pending: 1,
      ...over,
    };
  }

  it('judges a task by the longest so far, by the one running now when it runs longer, never under the reserve', () => {
    expect(taskEstimateMs(time(), 1_000)).toBe(30_000);
    expect(taskEstimateMs(time({ longestTaskMs: 90_000, lastEndAt: 50_000 }), 100_000)).toBe(
      90_000,
    );
    // The first task (session start included) has run 100 s and not ended yet.
    expect(taskEstimateMs(time(), 100_000)).toBe(100_000);
    // Nothing pending: nothing running to judge by.
    expect(taskEstimateMs(time({ pending: 0, longestTaskMs: 40_000 }), 200_000)).toBe(40_000);
  });

  it('takes only what ends, one after another with those it holds, by the close time', () => {
    // 269 s left, 30 s a task: 8 fit, one is held, 7 more.
    expect(timeRoom(time(), 1_000)).toBe(7);
    // A cold first task of 90 s ended at 100 s, one appended task runs: 170 s left, 1 more.
    expect(timeRoom(time({ longestTaskMs: 90_000, lastEndAt: 100_000 }), 100_000)).toBe(0);
    expect(timeRoom(time({ longestTaskMs: 90_000, lastEndAt: 100_000, pending: 0 }), 100_000)).toBe(
      1,
    );
    // Less than one task's time left: none.
    expect(timeRoom(time({ longestTaskMs: 90_000, pending: 0 }), 190_000)).toBe(0);
    expect(timeRoom(time({ pending: 0 }), 270_000)).toBe(0);
    expect(timeRoom(time({ pending: 0 }), 400_000)).toBe(0);
  });

  it('bounds an append by the room in tasks, in time and one batch, and takes nothing at 0', () => {
    expect(appendRoom(session())).toBe(20);
    expect(appendRoom(session({ taken: 97 }))).toBe(3);
    expect(appendRoom(session({ timeRoom: 2 }))).toBe(2);
    expect(appendRoom(session({ taken: 100, timeRoom: 5 }))).toBe(0);
    const tasks = ['a', 'b', 'c'].map((name) => merge(name));
    expect(selectAppend(session({ timeRoom: 1 }), tasks)).toHaveLength(1);
    expect(selectAppend(session({ timeRoom: 0 }), tasks)).toEqual([]);
  });
});

describe('leaderReportedAtResult (ADR 0046)', () => {
  it('reports a succeeded leader at its result, a failed one at the exit (its retry moves the job)', () => {
    expect(leaderReportedAtResult(true)).toBe(true);
    expect(leaderReportedAtResult(false)).toBe(false);
  });
});
