// The local runner's batch ends that need no Spark: a batch the job refuses as a whole, and a
// batch whose process dies with some tasks' results written. The job runs for real (its
// batch checks are plain Python); `spark-submit` is a stand-in that runs it with Python or
// dies as the test says. Spark itself: adapters/dispatch-unknown-runs.int.test.ts.
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pythonOfVersion, tempDir } from '@icepack/test';
import { sampleBinding, sampleMergeTask, sampleTableId, type Task } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { LocalRunner } from './local-runner.ts';
import { taskHash } from './run-key.ts';
import type { BatchRunRequest } from './spark-runner.ts';

const GiB = 2 ** 30;

/** A `spark-submit` that drops Spark's options and runs the job file with `python`. */
async function pythonSubmit(python: string): Promise<string> {
  const file = join(tempDir('icepack-submit-'), 'spark-submit');
  await writeFile(
    file,
    `#!/usr/bin/env bash\nwhile [ $# -gt 0 ] && [[ "$1" != *.py ]]; do shift; done\nexec ${JSON.stringify(python)} "$@"\n`,
  );
  await chmod(file, 0o755);
  return file;
}

/** A `spark-submit` that dies at once, as a killed driver: no result, no summary. */
async function dyingSubmit(): Promise<string> {
  const file = join(tempDir('icepack-submit-'), 'spark-submit');
  await writeFile(file, '#!/usr/bin/env bash\nexit 137\n');
  await chmod(file, 0o755);
  return file;
}

function batch(tasks: readonly Task[]): BatchRunRequest {
  return {
    batchRun: `batch-${Math.random().toString(36).slice(2)}@1`,
    attempt: 1,
    tasks: tasks.map((task, i) => ({ taskRun: `${task.id}@${String(i)}`, task })),
    binding: sampleBinding(),
    size: {
      driver: { cores: 1, memory: '1024m', memoryBytes: GiB },
      executor: { cores: 1, memory: '1024m', memoryBytes: GiB, instances: 1 },
      maxConcurrentFileGroupRewrites: 1,
      request: { cpuMillicores: 2000, memoryBytes: 2 * GiB },
    },
    catalog: { name: 'prod', uri: 'http://127.0.0.1:1' },
    timeoutMs: 60_000,
  };
}

const merge = (name: string) => sampleMergeTask({ table: sampleTableId({ name }) });

describe('LocalRunner.runBatch without Spark', () => {
  it('fails every task as bad input, not to be retried, when the job refuses the batch as a whole', async () => {
    const stateDir = tempDir('icepack-batch-');
    const runner = new LocalRunner({
      stateDir,
      pollMs: 50,
      sparkSubmit: await pythonSubmit(await pythonOfVersion('3.11')),
    });
    // The same task twice: the job cannot give each its own result.
    const request = batch([merge('a'), merge('a')]);
    const outcome = await runner.runBatch(request);
    expect(outcome.reattached).toBe(false);
    expect(outcome.ends.size).toBe(2);
    for (const end of outcome.ends.values()) {
      expect(end).toMatchObject({ ok: false, error: { kind: 'bad-input', retryable: false } });
      if (!end.ok) expect(end.error.message).toContain('tasks[1].id repeats tasks[0].id');
    }
  }, 60_000);

  it('reports the tasks a dead batch ended from their files and the others lost (retryable); a second call launches nothing', async () => {
    const stateDir = tempDir('icepack-batch-');
    const runner = new LocalRunner({ stateDir, pollMs: 50, sparkSubmit: await dyingSubmit() });
    const [first, second] = [merge('a'), merge('b')];
    const request = batch([first, second]);
    // The first task's result, as the job wrote it before the driver died.
    const results = join(runner.batchDir(request), 'results');
    await mkdir(results, { recursive: true });
    const failed = {
      ok: false,
      taskId: first.id,
      exitCode: 3,
      error: { kind: 'table-not-found', message: 'gone', retryable: false },
    };
    await writeFile(join(results, `${taskHash(first.id)}.json`), JSON.stringify(failed));
    const outcome = await runner.runBatch(request);
    expect(outcome.ends.get(request.tasks[0]!.taskRun)).toEqual({ ok: false, error: failed.error });
    expect(outcome.ends.get(request.tasks[1]!.taskRun)).toMatchObject({
      ok: false,
      error: { kind: 'lost', retryable: true },
    });
    const again = await new LocalRunner({ stateDir, pollMs: 50 }).runBatch(request);
    expect(again.reattached).toBe(true);
    expect([...again.ends.entries()]).toEqual([...outcome.ends.entries()]);
    const launches = await readFile(join(runner.batchDir(request), 'runs.log'), 'utf8');
    expect(launches.trim().split('\n')).toHaveLength(1);
  }, 60_000);

  it('appends to a resident batch by rename while its inbox is open, and is refused once the job closed it', async () => {
    const stateDir = tempDir('icepack-batch-');
    const runner = new LocalRunner({
      stateDir,
      pollMs: 50,
      sparkSubmit: await pythonSubmit(await pythonOfVersion('3.11')),
    });
    const later = [{ taskRun: 'merge-c@1', task: merge('c') }];
    // No batch, no inbox: nothing to append to.
    const request = batch([merge('a'), merge('a')]);
    expect(await runner.appendToBatch(request, later)).toBe(false);
    const polls: number[] = [];
    // A batch the job refuses as a whole still closes its inbox before it exits.
    const outcome = await runner.runBatch({
      ...request,
      resident: {
        idleSeconds: 600,
        maxTasks: 10,
        closeBy: Date.now() + 600_000,
        onPoll: () => {
          polls.push(1);
          return Promise.resolve([]);
        },
        onEnd: () => Promise.resolve(),
      },
    });
    expect([...outcome.ends.values()].every((e) => !e.ok)).toBe(true);
    const dir = runner.batchDir(request);
    const launch = JSON.parse(await readFile(join(dir, 'runs.log'), 'utf8')) as {
      resident?: boolean;
    };
    expect(launch.resident).toBe(true);
    expect(await readdir(dir)).toContain('inbox.closed');
    expect(await runner.appendToBatch(request, later)).toBe(false);
    // Nothing half-written is left behind a refused append.
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(await readdir(join(dir, 'inbox.closed'))).toEqual([]);
  }, 60_000);

  it('renames an appended task list into an open inbox, whole', async () => {
    const stateDir = tempDir('icepack-batch-');
    const runner = new LocalRunner({ stateDir });
    const request = batch([merge('a')]);
    await mkdir(join(runner.batchDir(request), 'inbox'), { recursive: true });
    const later = [{ taskRun: 'merge-b@1', task: merge('b') }];
    expect(await runner.appendToBatch(request, later)).toBe(true);
    const files = await readdir(join(runner.batchDir(request), 'inbox'));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^\d{15}-[0-9a-f]{16}\.json$/);
    const written = JSON.parse(
      await readFile(join(runner.batchDir(request), 'inbox', files[0]!), 'utf8'),
    ) as Task[];
    expect(written.map((t) => t.id)).toEqual([later[0]!.task.id]);
  });
});
