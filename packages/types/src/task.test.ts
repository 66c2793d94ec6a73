import { describe, expect, it } from 'vitest';
import { sampleMergeTask, sampleTableId } from './samples.ts';
import {
  compactPartitions,
  expandPartitionSets,
  MAX_TASK_GROUPS,
  MAX_TASK_PARTITIONS,
  parseTask,
  taskGroupOf,
  taskJobId,
  taskJobIdOfKey,
  taskSchema,
  type TaskInput,
} from './task.ts';
import { tableKey } from './table-id.ts';
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

  it('is the same made from the table key', () => {
    for (const group of [1, 3])
      expect(taskJobIdOfKey(tableKey(table), 'sort', group)).toBe(taskJobId(table, 'sort', group));
  });
});

describe('taskSchema', () => {
  it('accepts an orphans task and names a bad parameter', () => {
    const orphans: TaskInput = {
      ...merge,
      id: taskJobId(table, 'orphans'),
      type: 'orphans',
      parameters: {
        olderThan: '2025-12-27T12:00:00.000Z',
        quarantineWindowMs: 604_800_000,
        maxFiles: 10_000,
      },
    };
    expect(taskSchema.parse(orphans)).toEqual(orphans);
    expect(firstPath({ ...orphans, parameters: { ...orphans.parameters, maxFiles: 0 } })).toBe(
      'parameters.maxFiles',
    );
    const noWindow = { olderThan: '2025-12-27T12:00:00.000Z', maxFiles: 10 };
    expect(firstPath({ ...orphans, parameters: noWindow })).toBe('parameters.quarantineWindowMs');
  });

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

  it('accepts a Hilbert sort of two columns only', () => {
    const hilbert = (columns: { name: string }[]) => ({
      ...merge,
      id: taskJobId(table, 'sort'),
      type: 'sort',
      parameters: { ...merge.parameters, strategy: 'hilbert', columns },
    });
    expect(taskSchema.safeParse(hilbert([{ name: 'x' }, { name: 'y' }])).success).toBe(true);
    for (const columns of [[{ name: 'x' }], [{ name: 'x' }, { name: 'y' }, { name: 'z' }]]) {
      const parsed = taskSchema.safeParse(hilbert(columns));
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues.map((i) => i.path.join('.'))).toEqual(['parameters.columns']);
    }
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

describe('partition groups', () => {
  it('names group 1 like a table-wide task and the others with #N, up to MAX_TASK_GROUPS', () => {
    expect(taskJobId(table, 'merge', 1)).toBe(taskJobId(table, 'merge'));
    const second = taskJobId(table, 'merge', 2);
    expect(second).toBe(`${taskJobId(table, 'merge')}#2`);
    expect(taskGroupOf(second, table, 'merge')).toBe(2);
    expect(taskGroupOf(taskJobId(table, 'merge'), table, 'merge')).toBe(1);
    expect(
      taskGroupOf(`${taskJobId(table, 'merge')}#${MAX_TASK_GROUPS + 1}`, table, 'merge'),
    ).toBeNull();
    expect(taskGroupOf(`${taskJobId(table, 'merge')}#1`, table, 'merge')).toBeNull();
    expect(taskGroupOf(second, table, 'sort')).toBeNull();
  });

  it('accepts a group task with partitions (any of them) and transform predicates', () => {
    const partitions = [
      [
        { column: 'region', value: 'eu' },
        { column: 'ts', transform: 'day', value: '2026-01-02' },
      ],
      [{ column: 'id', transform: 'bucket[16]', value: '3' }],
    ];
    const task = {
      ...merge,
      id: taskJobId(table, 'merge', 3),
      parameters: { ...merge.parameters, partitions },
    };
    expect(taskSchema.parse(task)).toEqual(task);
    expect(firstPath({ ...task, parameters: { ...merge.parameters, partitions: [[]] } })).toBe(
      'parameters.partitions[0]',
    );
    const badTransform = [[{ column: 'ts', transform: 'days(ts)', value: '1' }]];
    expect(
      firstPath({ ...task, parameters: { ...merge.parameters, partitions: badTransform } }),
    ).toBe('parameters.partitions[0][0].transform');
  });
});

describe('partition sets (the compact form of partitions)', () => {
  const partitions = [
    [
      { column: 'region', value: 'eu' },
      { column: 'ts', transform: 'day', value: '2026-01-02' },
    ],
    [{ column: 'id', transform: 'bucket[16]', value: '3' }],
    [
      { column: 'region', value: null },
      { column: 'ts', transform: 'day', value: '2026-01-01' },
    ],
  ];

  it('holds each shape once, values per partition, and expands back to the same partitions', () => {
    const sets = compactPartitions(partitions);
    expect(sets).toEqual([
      {
        fields: [{ column: 'region' }, { column: 'ts', transform: 'day' }],
        values: [
          ['eu', '2026-01-02'],
          [null, '2026-01-01'],
        ],
      },
      { fields: [{ column: 'id', transform: 'bucket[16]' }], values: [['3']] },
    ]);
    // Shapes grouped: the same partitions, the third now second.
    expect(expandPartitionSets(sets)).toEqual([partitions[0], partitions[2], partitions[1]]);
    // An explicit identity is the same shape as an implicit one.
    expect(
      compactPartitions([
        [{ column: 'a', value: 1 }],
        [{ column: 'a', transform: 'identity', value: 2 }],
      ]),
    ).toEqual([{ fields: [{ column: 'a' }], values: [[1], [2]] }]);
    // Next to each other, shapes that differ only in a transform, a column or a length stay apart.
    expect(
      compactPartitions([
        [{ column: 'ts', transform: 'day', value: '2026-01-01' }],
        [{ column: 'ts', transform: 'month', value: '2026-01' }],
        [{ column: 'tz', transform: 'month', value: '2026-02' }],
        [
          { column: 'tz', transform: 'month', value: '2026-03' },
          { column: 'a', value: 1 },
        ],
        [{ column: 'ts', transform: 'day', value: '2026-01-02' }],
      ]),
    ).toEqual([
      { fields: [{ column: 'ts', transform: 'day' }], values: [['2026-01-01'], ['2026-01-02']] },
      { fields: [{ column: 'ts', transform: 'month' }], values: [['2026-01']] },
      { fields: [{ column: 'tz', transform: 'month' }], values: [['2026-02']] },
      {
        fields: [{ column: 'tz', transform: 'month' }, { column: 'a' }],
        values: [['2026-03', 1]],
      },
    ]);
  });

  it('is accepted in a task, and refused naming the field when a row does not fit', () => {
    const task = {
      ...merge,
      parameters: { ...merge.parameters, partitionSets: compactPartitions(partitions) },
    };
    expect(taskSchema.parse(task)).toEqual(task);
    const short = [{ fields: [{ column: 'a' }, { column: 'b' }], values: [['x', 'y'], ['x']] }];
    expect(firstPath({ ...task, parameters: { ...merge.parameters, partitionSets: short } })).toBe(
      'parameters.partitionSets[0].values[1]',
    );
    const badField = [{ fields: [{ column: 'ts', transform: 'days' }], values: [['1']] }];
    expect(
      firstPath({ ...task, parameters: { ...merge.parameters, partitionSets: badField } }),
    ).toBe('parameters.partitionSets[0].fields[0].transform');
    const many = [
      { fields: [{ column: 'a' }], values: Array.from({ length: MAX_TASK_PARTITIONS }, () => [1]) },
    ];
    expect(
      firstPath({
        ...task,
        parameters: {
          ...merge.parameters,
          partitions: [[{ column: 'a', value: 2 }]],
          partitionSets: many,
        },
      }),
    ).toBe('parameters.partitionSets');
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
