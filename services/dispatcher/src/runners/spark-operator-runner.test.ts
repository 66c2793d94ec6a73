import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { sampleMergeTask, sampleTableId } from '@icepack/types';
import { taskHash } from './run-key.ts';
import {
  batchEnds,
  batchSummaryOfDriverPod,
  errorFromStatus,
  jobOutputOfDriverPod,
} from './spark-operator-runner.ts';

function driverPod(message: string | undefined): V1Pod {
  return {
    status: {
      containerStatuses: [
        {
          name: 'spark-kubernetes-driver',
          image: 'spark-job',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { terminated: { exitCode: 2, ...(message === undefined ? {} : { message }) } },
        },
      ],
    },
  };
}

describe("the job's output from its driver pod's termination message", () => {
  it("gives a failed run's own error: kind, message, retryability", () => {
    const line = JSON.stringify({
      ok: false,
      taskId: 't1',
      exitCode: 2,
      error: { kind: 'bad-input', message: 'no such column: no_such_column', retryable: false },
    });
    expect(jobOutputOfDriverPod(driverPod(line))).toMatchObject({
      ok: false,
      error: { kind: 'bad-input', message: 'no such column: no_such_column', retryable: false },
    });
  });

  it('gives nothing for a pod without a message or with text that is no result line', () => {
    expect(jobOutputOfDriverPod(driverPod(undefined))).toBeUndefined();
    expect(jobOutputOfDriverPod(driverPod('OOMKilled'))).toBeUndefined();
    expect(jobOutputOfDriverPod({})).toBeUndefined();
  });
});

describe("the error of a failed SparkApplication without the job's own output", () => {
  it("is out-of-memory (retryable, the next attempt larger) for a driver the kernel killed (137) or the job's exit 7", () => {
    for (const code of [137, 7]) {
      expect(
        errorFromStatus({
          state: 'FAILED',
          errorMessage: `driver container failed with ExitCode: ${String(code)}, Reason: OOMKilled`,
        }),
      ).toMatchObject({ kind: 'out-of-memory', retryable: true });
    }
    expect(
      errorFromStatus({
        state: 'FAILED',
        errorMessage: 'driver container failed with ExitCode: 1, Reason: Error',
      }),
    ).toMatchObject({ kind: 'failed', retryable: false });
  });
});

describe("a batch's task ends from its summary in the driver's termination message", () => {
  const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((name) => {
    const task = sampleMergeTask({ table: sampleTableId({ name }) });
    return { taskRun: `${task.id}@1`, task };
  });
  const tasks = [a!, b!, c!, d!];
  const summary = (extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      batch: 4,
      exitCode: 1,
      ran: 3,
      tasks: {
        [taskHash(a!.task.id)]: { exitCode: 0, durationMs: 4200, cpuSeconds: 3.5 },
        [taskHash(b!.task.id)]: {
          exitCode: 6,
          error: { kind: 'refused', message: 'not the planned table', retryable: false },
        },
        // Shortened to fit the 4 KiB message: kind and retryability stay, the message went.
        [taskHash(c!.task.id)]: {
          exitCode: 4,
          error: { kind: 'commit-conflict', retryable: true },
        },
      },
      ...extra,
    });

  it('gives each task its own end: success with its own figures, its own error, lost without an outcome', () => {
    const read = batchSummaryOfDriverPod(driverPod(summary()));
    expect(read).toBeDefined();
    const ends = batchEnds({ tasks }, read, undefined);
    expect(ends.get(a!.taskRun)).toEqual({
      ok: true,
      figures: { durationMs: 4200, cpuSeconds: 3.5 },
    });
    expect(ends.get(b!.taskRun)).toEqual({
      ok: false,
      error: { kind: 'refused', message: 'not the planned table', retryable: false },
    });
    expect(ends.get(c!.taskRun)).toEqual({
      ok: false,
      error: { kind: 'commit-conflict', message: 'exit code 4', retryable: true },
    });
    // The session died before d: lost, retried as a new attempt, never reported done.
    expect(ends.get(d!.taskRun)).toMatchObject({
      ok: false,
      error: { kind: 'lost', retryable: true },
    });
  });

  it('gives the tasks without an outcome the batch error when the batch was bad input, out-of-memory when the driver was killed for it', () => {
    const bad = JSON.stringify({
      batch: 0,
      exitCode: 2,
      error: { kind: 'bad-input', message: 'tasks must not be empty', retryable: false },
    });
    expect(
      batchEnds({ tasks: [a!] }, batchSummaryOfDriverPod(driverPod(bad)), undefined).get(
        a!.taskRun,
      ),
    ).toEqual({
      ok: false,
      error: { kind: 'bad-input', message: 'tasks must not be empty', retryable: false },
    });
    const oom = errorFromStatus({
      state: 'FAILED',
      errorMessage: 'driver container failed with ExitCode: 137, Reason: OOMKilled',
    });
    expect(batchEnds({ tasks: [a!] }, undefined, oom).get(a!.taskRun)).toMatchObject({
      ok: false,
      error: { kind: 'out-of-memory', retryable: true },
    });
    // Any other failure without a summary: lost, retryable, the application's message kept.
    const failed = errorFromStatus({
      state: 'FAILED',
      errorMessage: 'driver container failed with ExitCode: 1, Reason: Error',
    });
    const lost = batchEnds({ tasks: [a!] }, undefined, failed).get(a!.taskRun);
    expect(lost).toMatchObject({ ok: false, error: { kind: 'lost', retryable: true } });
    expect(lost?.ok === false ? lost.error.message : '').toContain('ExitCode: 1');
  });

  it("reads no summary from a single run's result line", () => {
    const single = JSON.stringify({
      ok: false,
      taskId: 't1',
      exitCode: 2,
      error: { kind: 'bad-input', message: 'x', retryable: false },
    });
    expect(batchSummaryOfDriverPod(driverPod(single))).toBeUndefined();
  });
});
