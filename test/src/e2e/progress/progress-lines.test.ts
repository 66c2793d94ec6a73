import { parseTableState, sampleTableState } from '@icepack/types';
import type { TableState, TaskEvent } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { ProgressLines } from './progress-lines.ts';
import { sampleSessionTail } from './progress-samples.ts';

const table = { catalog: 'lake', namespace: ['demo'], name: 'events' };

function state(dataFiles: number, smallFiles: number, snapshots: number): TableState {
  const base = sampleTableState();
  return parseTableState({
    ...base,
    table,
    files: { ...base.files, dataFiles, smallFiles },
    snapshots: { ...base.snapshots, total: snapshots },
  });
}

const event = (status: TaskEvent['status'], extra: Partial<TaskEvent> = {}): TaskEvent => ({
  taskId: 't1',
  table,
  taskType: 'merge',
  status,
  at: '2026-11-30T10:00:00.000Z',
  ...extra,
});

describe('ProgressLines', () => {
  it('says when a table is found, and again only when its figures change', () => {
    const lines = new ProgressLines();
    expect(lines.tableState('k', state(60, 60, 30))).toMatch(
      /^found +lake\.demo\.events: 60 data files \(60 small\), .*30 snapshots/,
    );
    expect(lines.tableState('k', state(60, 60, 30))).toBeUndefined();
    expect(lines.tableState('k', state(1, 1, 31))).toMatch(
      /^rescan +lake\.demo\.events: 1 data file \(1 small\)/,
    );
    expect(lines.tableState('k', null)).toBe('table k is gone (dropped from the catalog)');
    expect(lines.tableState('k', null)).toBeUndefined();
  });

  it('tells what a finished task changed, and why a task was planned or failed', () => {
    const lines = new ProgressLines();
    expect(lines.taskEvent(event('planned', { reason: '60 small files > 5' }))).toBe(
      'planned merge lake.demo.events — 60 small files > 5',
    );
    expect(lines.taskEvent(event('updated'))).toBeUndefined();
    expect(lines.taskEvent(event('started', { attempt: 2 }))).toBe(
      'running merge lake.demo.events (attempt 2)',
    );
    const figures = { dataFiles: 60, smallFiles: 60, deleteFiles: 0, snapshots: 30, bytes: 90_000 };
    expect(
      lines.taskEvent(
        event('succeeded', {
          before: figures,
          after: { ...figures, dataFiles: 1, smallFiles: 1, snapshots: 31, bytes: 3_000 },
        }),
      ),
    ).toBe(
      'done    merge lake.demo.events: data files 60 → 1, small files 60 → 1, snapshots 30 → 31, bytes 90000 → 3000',
    );
    expect(
      lines.taskEvent(
        event('failed', { error: { kind: 'oom', message: 'executor lost', retryable: false } }),
      ),
    ).toBe('FAILED  merge lake.demo.events: executor lost');
  });

  it('says when a resident session closed after its idle, and what holding it cost', () => {
    const lines = new ProgressLines();
    expect(lines.sessionTail(sampleSessionTail)).toBe(
      'idle    session of merge lake.demo.events closed after 60 s idle (120.284 core-s held)',
    );
  });
});
