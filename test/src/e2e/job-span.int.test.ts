import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { infraEnv } from '../infra/env.ts';
import { OtlpReceiver } from './otlp-receiver.ts';

// The Spark job's span, with the job's own Python exporter (the venv of deploy/local/spark.sh)
// and the test's OTLP receiver. A task that fails its checks ends before Spark starts, so this
// takes a second; the end-to-end test sees the span of real runs in a commit's trace.

const job = join(import.meta.dirname, '..', '..', '..', 'jobs', 'spark', 'icepack_job.py');

interface Exit {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function runJob(args: readonly string[], env: Record<string, string>): Promise<Exit> {
  return new Promise((resolve) => {
    execFile(
      infraEnv().python,
      [job, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

let otlp: OtlpReceiver;

beforeAll(async () => {
  otlp = await OtlpReceiver.start();
});

afterAll(async () => {
  await otlp?.close();
});

describe('the Spark job’s span (jobs/spark/icepack_job.py)', () => {
  it('continues the dispatch’s trace from TRACEPARENT and reports the run’s outcome over OTLP/HTTP', async () => {
    const traceId = randomBytes(16).toString('hex');
    const dispatchSpanId = randomBytes(8).toString('hex');
    // A merge task whose parameters fail the job's checks: exit 2, no Spark.
    const task = {
      id: 'merge/lake/sales/orders',
      type: 'merge',
      table: { catalog: 'lake', namespace: ['sales'], name: 'orders' },
      state: { tableUuid: 'f79c3e09-8dc7-4b5c-9f3a-2d6c2e5d9c11' },
      parameters: {},
    };
    const exit = await runJob(['--task-json', JSON.stringify(task)], {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      TRACEPARENT: `00-${traceId}-${dispatchSpanId}-01`,
    });

    // The job's behaviour is what it is without tracing: one result line, exit 2.
    expect(exit.code, exit.stderr).toBe(2);
    expect(exit.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(exit.stdout)).toMatchObject({ ok: false, error: { kind: 'bad-input' } });
    // The span was sent before the job exited.
    expect(otlp.rejected).toEqual([]);
    expect(otlp.trace(traceId)).toEqual([
      {
        service: 'spark-job',
        name: 'job merge',
        traceId,
        spanId: expect.stringMatching(/^[0-9a-f]{16}$/) as unknown,
        parentSpanId: dispatchSpanId,
        attributes: {
          'icepack.task.id': 'merge/lake/sales/orders',
          'icepack.task.type': 'merge',
          'icepack.table': 'lake.sales.orders',
          'icepack.job.exit_code': 2,
          'icepack.job.error_kind': 'bad-input',
        },
        statusCode: 2,
        statusMessage: 'bad-input: task.parameters.targetFileSizeBytes is required',
      },
    ]);
  });

  it('names a batch’s span `job batch`, with its tasks’ ids and how many failed', async () => {
    const traceId = randomBytes(16).toString('hex');
    const dispatchSpanId = randomBytes(8).toString('hex');
    // Two merges that each fail their own checks: each has its own result (exit 2), no Spark
    // starts, and the batch itself ends with every task's result (exit 0).
    const merge = (name: string) => ({
      id: `merge/lake/sales/${name}`,
      type: 'merge',
      table: { catalog: 'lake', namespace: ['sales'], name },
      state: { tableUuid: 'f79c3e09-8dc7-4b5c-9f3a-2d6c2e5d9c11' },
      parameters: {},
    });
    const resultDir = await mkdtemp(join(tmpdir(), 'icepack-job-span-'));
    try {
      const exit = await runJob(
        [
          '--tasks-json',
          JSON.stringify([merge('orders'), merge('returns')]),
          '--result-dir',
          resultDir,
        ],
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
          TRACEPARENT: `00-${traceId}-${dispatchSpanId}-01`,
        },
      );
      expect(exit.code, exit.stderr).toBe(0);
      expect(JSON.parse(exit.stdout.trim().split('\n').at(-1)!)).toMatchObject({
        batch: 2,
        exitCode: 0,
      });
    } finally {
      await rm(resultDir, { recursive: true, force: true });
    }
    expect(otlp.rejected).toEqual([]);
    expect(otlp.trace(traceId)).toEqual([
      {
        service: 'spark-job',
        name: 'job batch',
        traceId,
        spanId: expect.stringMatching(/^[0-9a-f]{16}$/) as unknown,
        parentSpanId: dispatchSpanId,
        attributes: {
          'icepack.batch.tasks': 2,
          'icepack.task.ids': ['merge/lake/sales/orders', 'merge/lake/sales/returns'],
          'icepack.job.exit_code': 0,
          'icepack.batch.failed': 2,
        },
        statusCode: 1,
        statusMessage: '',
      },
    ]);
  });
});
