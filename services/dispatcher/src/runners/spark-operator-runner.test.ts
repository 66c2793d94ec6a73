import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { errorFromStatus, jobOutputOfDriverPod } from './spark-operator-runner.ts';

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
