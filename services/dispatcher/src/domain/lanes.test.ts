import { describe, expect, it } from 'vitest';
import { parseTask, sampleBinding, sampleMergeTask, taskJobId, type Task } from '@icepack/types';
import { concurrencyOf, laneOf, SMALL_TASK_BOUND } from './lanes.ts';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

function rewrite(
  bytesToRewrite: number,
  filesToRewrite: number,
  type: 'merge' | 'sort' = 'merge',
): Task {
  const task = sampleMergeTask();
  const withState = { ...task, state: { ...task.state, bytesToRewrite, filesToRewrite } };
  if (type === 'merge') return withState;
  return parseTask({
    ...withState,
    id: taskJobId(task.table, 'sort'),
    type: 'sort',
    parameters: { ...task.parameters, strategy: 'sort', columns: [{ name: 'id' }] },
  });
}

function cleanup(snapshots: number | undefined): Task {
  const task = sampleMergeTask();
  return parseTask({
    ...task,
    type: 'cleanup',
    parameters: { olderThan: '2026-01-01T00:00:00.000Z', retainLast: 1 },
    score: {
      ...task.score,
      parts:
        snapshots === undefined
          ? [{ factor: 'base', value: 1, points: 100 }]
          : [{ factor: 'snapshots', value: snapshots, threshold: 100, points: 10 }],
    },
    id: taskJobId(task.table, 'cleanup'),
    state: { ...task.state, bytesToRewrite: 0, filesToRewrite: 0 },
  });
}

describe('laneOf', () => {
  it.each([
    ['a few small files', rewrite(3 * MiB, 30), 'small'],
    ['just under 1 GiB and at 500 files', rewrite(GiB - 1, 500), 'small'],
    ['1 GiB to rewrite', rewrite(GiB, 10), 'large'],
    ['501 files, few bytes', rewrite(10 * MiB, 501), 'large'],
    ['a big CDC merge', rewrite(40 * GiB, 9_000), 'large'],
    ['a small sort', rewrite(100 * MiB, 40, 'sort'), 'small'],
    ['a big sort', rewrite(5 * GiB, 40, 'sort'), 'large'],
    ['a cleanup of a table with 60 snapshots', cleanup(60), 'small'],
    ['a cleanup at the snapshot bound', cleanup(SMALL_TASK_BOUND.cleanupSnapshots), 'small'],
    ['a cleanup of a table with a huge snapshot count', cleanup(50_000), 'large'],
    ['a cleanup whose score names no snapshot count', cleanup(undefined), 'small'],
  ])('%s → %s', (_name, task, lane) => {
    expect(laneOf(task)).toBe(lane);
  });

  it('takes another bound', () => {
    const bound = { ...SMALL_TASK_BOUND, bytes: 10 * MiB };
    expect(laneOf(rewrite(3 * MiB, 30), bound)).toBe('small');
    expect(laneOf(rewrite(20 * MiB, 30), bound)).toBe('large');
  });
});

describe('concurrencyOf', () => {
  it('is both lanes: slots + smallSlots', () => {
    expect(concurrencyOf(sampleBinding({ slots: 2, smallSlots: 1 }))).toBe(3);
    expect(concurrencyOf(sampleBinding({ slots: 1, smallSlots: 0 }))).toBe(1);
  });
});
