import { describe, expect, it } from 'vitest';
import { sampleMergeTask, sampleTableId, taskJobId, type Task } from '@icepack/types';
import { batchable, DEFAULT_BATCH_LIMITS, estimatedTaskMs, selectBatch } from './batch.ts';
import { SMALL_TASK_BOUND } from './lanes.ts';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** A merge on table `name` of catalog `catalog` rewriting `bytes` in `files` files. */
function task(name: string, bytes = 10 * MiB, files = 30, catalog = 'prod'): Task {
  const table = sampleTableId({ catalog, name });
  const base = sampleMergeTask({ table });
  return { ...base, state: { ...base.state, bytesToRewrite: bytes, filesToRewrite: files } };
}

const ids = (tasks: readonly Task[]) => tasks.map((t) => t.table.name);

describe('batchable', () => {
  it('takes the small tasks of the small-task lane: under 1 GiB and at most 500 files', () => {
    expect(batchable(task('a', GiB - 1, 500))).toBe(true);
    expect(batchable(task('a', GiB, 10))).toBe(false);
    expect(batchable(task('a', MiB, 501))).toBe(false);
    expect(batchable(task('a', 2 * GiB), { small: { ...SMALL_TASK_BOUND, bytes: 4 * GiB } })).toBe(
      true,
    );
  });
});

describe('estimatedTaskMs', () => {
  it('is 5 s per task plus the bytes at 32 MiB/s by default', () => {
    expect(estimatedTaskMs(task('a', 0))).toBe(5_000);
    expect(estimatedTaskMs(task('a', 320 * MiB))).toBe(15_000);
  });
});

describe('selectBatch', () => {
  it('takes small tasks of the leader’s catalog in queue order, one per table', () => {
    const leader = task('a');
    // A second merge of the same table (another partition group): not in the same batch.
    const sameTable: Task = { ...task('a'), id: `${taskJobId(leader.table, 'merge')}#2` };
    const batch = selectBatch(leader, [
      leader,
      task('b'),
      task('other-catalog', MiB, 1, 'test'),
      sameTable,
      task('large', 2 * GiB),
      task('c'),
    ]);
    expect(ids(batch)).toEqual(['a', 'b', 'c']);
    expect(batch[0]).toBe(leader);
  });

  it('runs a large leader alone', () => {
    expect(ids(selectBatch(task('large', 2 * GiB), [task('b'), task('c')]))).toEqual(['large']);
  });

  it('stops at 20 tasks by default', () => {
    const candidates = Array.from({ length: 30 }, (_, i) => task(`t${String(i)}`, 0));
    const batch = selectBatch(task('leader', 0), candidates);
    expect(batch).toHaveLength(DEFAULT_BATCH_LIMITS.maxTasks);
    expect(ids(batch).slice(0, 3)).toEqual(['leader', 't0', 't1']);
  });

  it('keeps the estimated duration within 10 min, passing over a task that does not fit for a smaller one', () => {
    // Each task just under 1 GiB (the largest small task): 5 s + 32 s. Sixteen fit in 600 s
    // (592 s); a seventeenth would not, but a tiny one (5 s) still does.
    const big = Array.from({ length: 20 }, (_, i) => task(`big${String(i)}`, GiB - 1));
    const batch = selectBatch(task('leader', GiB - 1), [...big, task('tiny', 0)]);
    expect(batch).toHaveLength(17);
    expect(ids(batch).at(-1)).toBe('tiny');
    const total = batch.reduce((ms, t) => ms + estimatedTaskMs(t), 0);
    expect(total).toBeLessThanOrEqual(DEFAULT_BATCH_LIMITS.maxDurationMs);
  });

  it('honours limits passed in', () => {
    const batch = selectBatch(task('a'), [task('b'), task('c'), task('d')], { maxTasks: 2 });
    expect(ids(batch)).toEqual(['a', 'b']);
  });
});
