import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sampleMergeTask } from '@icepack/types';
import {
  jobResultSchema,
  outcomeFigures,
  parseBatchSummary,
  resultFigures,
  type JobResult,
} from './job-result.ts';
import { taskHash } from './run-key.ts';
import { batchEnds } from './spark-operator-runner.ts';
import { endFigures } from './spark-runner.ts';

// One succeeded task's full result and its compact outcome as the job writes it
// (jobs/spark/test_icepack_job.py checks `task_outcome(result) == outcome` on the same file).
const pair = JSON.parse(
  readFileSync(
    resolve(
      import.meta.dirname,
      '..',
      '..',
      '..',
      '..',
      'jobs',
      'spark',
      'testdata',
      'batch-task-outcome.json',
    ),
    'utf8',
  ),
) as { result: unknown; outcome: unknown };

function fullResult(): JobResult {
  const parsed = jobResultSchema.parse(pair.result);
  if (!parsed.ok) throw new Error('the fixture is a success');
  return parsed;
}

/** The outcome as the operator runner reads it, in a batch summary under `key`. */
function outcomeIn(outcome: unknown, key = 'a'.repeat(16)) {
  const summary = parseBatchSummary(
    JSON.stringify({ batch: 1, exitCode: 0, tasks: { [key]: outcome } }),
  );
  const read = summary?.tasks?.[key];
  if (read === undefined) throw new Error('no outcome read');
  return read;
}

describe("a batch task's compact outcome", () => {
  it('gives the same figures as the full result of the same task: duration, CPU, commits, snapshots, heap', () => {
    const local = resultFigures(fullResult());
    expect(outcomeFigures(outcomeIn(pair.outcome))).toEqual(local);
    expect(local).toEqual({
      durationMs: 41_234,
      cpuSeconds: 73.125,
      commits: {
        bytesRead: 2_147_483_648,
        bytesWritten: 2_013_265_920,
        filesRewritten: 62,
        dataFilesRemoved: 60,
        deleteFilesRemoved: 2,
      },
      memory: { peakHeapBytes: 805_306_368, heapBytes: 2_147_483_648, cores: 2 },
      snapshots: { before: 12, after: 13 },
    });
  });

  it('so the operator runner ends a batched task with the figures the local runner reads from its result', () => {
    const task = sampleMergeTask();
    const taskRun = `${task.id}@1`;
    const summary = parseBatchSummary(
      JSON.stringify({ batch: 1, exitCode: 0, tasks: { [taskHash(task.id)]: pair.outcome } }),
    );
    const operator = batchEnds({ tasks: [{ taskRun, task }] }, summary, undefined).get(taskRun);
    expect(operator).toBeDefined();
    expect(endFigures(operator!)).toEqual(endFigures({ ok: true, result: fullResult() }));
  });

  it('gives only the figures left after fit_summary dropped some, and a heap without its size', () => {
    const { exitCode, durationMs, cpuSeconds, snapshots } = pair.outcome as Record<string, unknown>;
    expect(outcomeFigures(outcomeIn({ exitCode, durationMs, cpuSeconds, snapshots }))).toEqual({
      durationMs: 41_234,
      cpuSeconds: 73.125,
      snapshots: { before: 12, after: 13 },
    });
    expect(outcomeFigures(outcomeIn({ exitCode: 0, memory: [5, 1] }))).toEqual({
      memory: { peakHeapBytes: 5, cores: 1 },
    });
    expect(outcomeFigures(outcomeIn({ exitCode: 0 }))).toEqual({});
  });

  it('leaves out a figure written wrong, never the task: its exit code still decides its end', () => {
    const read = outcomeIn({
      exitCode: 0,
      durationMs: 7,
      commits: [1, 2],
      memory: [-1, 1],
      snapshots: 'twelve',
    });
    expect(read.exitCode).toBe(0);
    expect(outcomeFigures(read)).toEqual({ durationMs: 7 });
  });
});
