import { sampleMergeTask, sampleTableId, tableKey, type Task } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { RESIDENT_OFF, residentOn, selectAppend, type LiveSession } from './resident-session.ts';

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
