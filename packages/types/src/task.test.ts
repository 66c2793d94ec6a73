import { describe, expect, it } from 'vitest';
import { sampleMergeTask, sampleTableId } from './samples.ts';
import { parseTask, taskJobId, taskSchema, type TaskInput } from './task.ts';
import { formatPath } from './validation-error.ts';

function firstPath(value: unknown): string | undefined {
  const result = taskSchema.safeParse(value);
  return result.success ? undefined : formatPath(result.error.issues[0]?.path ?? []);
}

const merge = sampleMergeTask();
const table = sampleTableId();

describe('taskJobId', () => {
  it('is deterministic per (table, type) and BullMQ-safe', () => {
    expect(taskJobId(table, 'merge')).toBe('merge/prod/sales/orders');
    expect(taskJobId(table, 'merge')).toBe(taskJobId({ ...table }, 'merge'));
    expect(taskJobId(table, 'sort')).not.toBe(taskJobId(table, 'merge'));
    const odd = { catalog: '1', namespace: ['2:3'], name: '4' };
    expect(taskJobId(odd, 'cleanup')).not.toContain(':');
    expect(taskJobId(odd, 'cleanup')).not.toMatch(/^\d+$/);
  });
});

describe('taskSchema', () => {
  it('accepts a merge task', () => {
    expect(taskSchema.parse(merge)).toEqual(merge);
  });

  it('accepts a cleanup task', () => {
    const cleanup: TaskInput = {
      ...merge,
      id: taskJobId(table, 'cleanup'),
      type: 'cleanup',
      parameters: {
        olderThan: '2025-12-27T12:00:00.000Z',
        retainLast: 1,
        retentionMs: 432_000_000,
      },
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    };
    expect(taskSchema.parse(cleanup)).toEqual(cleanup);
  });

  it('accepts a sort task and fills column defaults', () => {
    const sort = {
      ...merge,
      id: taskJobId(table, 'sort'),
      type: 'sort',
      parameters: {
        ...merge.parameters,
        strategy: 'zorder',
        columns: [
          { name: 'customer_id' },
          { name: 'order_ts', direction: 'desc', nullOrder: 'nulls-last' },
        ],
        partitionFilter: [{ column: 'order_date', value: '2026-01-01' }],
      },
    };
    const parsed = taskSchema.parse(sort);
    expect(parsed.type === 'sort' && parsed.parameters.columns).toEqual([
      { name: 'customer_id', direction: 'asc', nullOrder: 'nulls-first' },
      { name: 'order_ts', direction: 'desc', nullOrder: 'nulls-last' },
    ]);
  });

  it.each([
    [{ id: 'merge:prod' }, 'id'],
    [{ id: taskJobId(table, 'sort') }, 'id'],
    [{ type: 'vacuum' }, 'type'],
    [{ score: { ...merge.score, priority: 0 } }, 'score.priority'],
    [{ score: { ...merge.score, priority: 2_097_152 } }, 'score.priority'],
    [{ state: { ...merge.state, snapshotId: 1 } }, 'state.snapshotId'],
    [{ state: { ...merge.state, tableUuid: '' } }, 'state.tableUuid'],
    [{ state: { ...merge.state, bytesToRewrite: -1 } }, 'state.bytesToRewrite'],
    [{ traceparent: 'abc' }, 'traceparent'],
    [
      { parameters: { ...merge.parameters, minFileSizeBytes: 2 ** 40 } },
      'parameters.minFileSizeBytes',
    ],
    [{ parameters: { ...merge.parameters, maxFileSizeBytes: 1 } }, 'parameters.maxFileSizeBytes'],
    [{ parameters: { ...merge.parameters, partitionFilter: [] } }, 'parameters.partitionFilter'],
    [{ type: 'cleanup', id: taskJobId(table, 'cleanup') }, 'parameters.olderThan'],
    [{ type: 'sort', id: taskJobId(table, 'sort') }, 'parameters.strategy'],
    [
      {
        type: 'sort',
        id: taskJobId(table, 'sort'),
        parameters: { ...merge.parameters, strategy: 'sort', columns: [] },
      },
      'parameters.columns',
    ],
  ])('rejects %j at %s', (patch, path) => {
    expect(firstPath({ ...merge, ...patch })).toBe(path);
  });
});

describe('parseTask', () => {
  it('returns the task, or throws naming the field', () => {
    expect(parseTask(merge)).toEqual(merge);
    expect(() => parseTask({ ...merge, state: { ...merge.state, snapshotId: 5 } })).toThrow(
      /^invalid task: state\.snapshotId: /,
    );
  });
});
