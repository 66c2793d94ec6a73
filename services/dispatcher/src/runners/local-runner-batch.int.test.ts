// Batched runs (issue 18, point 1): three small tasks of one catalog in one spark-submit of the
// local runner, one of them on a table dropped before the run. The other two commit, each with
// its own result; the dropped one fails alone. A second runner (a restarted dispatcher) that
// asks for the same batch while it runs follows it instead of launching it again.
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { dispatchTables, type DispatchTruth } from '../adapters/testing/dispatch-tables.ts';
import { mergeTask } from '../adapters/testing/sample-tasks.ts';
import { testBinding } from '../adapters/testing/test-binding.ts';
import { LocalRunner } from './local-runner.ts';
import type { BatchOutcome, BatchRunRequest } from './spark-runner.ts';

const infra = inject('infra');
const suffix = Math.random().toString(36).slice(2, 8);
const catalogName = `batch${suffix}`;
const tableOptions = {
  python: infra.python,
  catalogUri: infra.catalogUri,
  sparkJars: infra.sparkJars,
  catalogName,
  prefix: `batch_${suffix}`,
};
const KEYS = ['unpartitioned-small-files', 'format-v1', 'odd-name'];
const GiB = 2 ** 30;

function truth(key: string, which: Record<string, DispatchTruth>): DispatchTruth {
  const t = which[key];
  if (t === undefined) throw new Error(`no truth for ${key}`);
  return t;
}

/** Drops the table in the REST catalog (with its files): its task must fail, alone. */
async function drop(t: DispatchTruth): Promise<void> {
  const namespace = encodeURIComponent(t.id.namespace.join('\x1f'));
  const url = `${infra.catalogUri}/v1/namespaces/${namespace}/tables/${encodeURIComponent(t.id.name)}`;
  const answer = await fetch(`${url}?purgeRequested=true`, { method: 'DELETE' });
  if (!answer.ok) throw new Error(`dropping ${t.id.name}: HTTP ${String(answer.status)}`);
}

describe('the local runner runs a batch of small tasks in one Spark application', () => {
  let before: Record<string, DispatchTruth>;
  let after: Record<string, DispatchTruth>;
  let request: BatchRunRequest;
  let first: BatchOutcome;
  let second: BatchOutcome;
  let stateDir: string;

  beforeAll(async () => {
    before = await dispatchTables(KEYS, tableOptions);
    await drop(truth('odd-name', before));
    stateDir = await mkdtemp(join(tmpdir(), 'icepack-batch-'));
    const tasks = [
      mergeTask(truth('unpartitioned-small-files', before), 5),
      mergeTask(truth('odd-name', before), 2),
      mergeTask(truth('format-v1', before), 2),
    ];
    request = {
      batchRun: `batch-${suffix}@1`,
      attempt: 1,
      tasks: tasks.map((task, i) => ({ taskRun: `${task.id}@${String(i)}`, task })),
      binding: testBinding(catalogName),
      size: {
        driver: { cores: 1, memory: '1024m', memoryBytes: GiB },
        executor: { cores: 1, memory: '1024m', memoryBytes: GiB, instances: 1 },
        maxConcurrentFileGroupRewrites: 1,
        request: { cpuMillicores: 2000, memoryBytes: 2 * GiB },
      },
      catalog: { name: catalogName, uri: infra.catalogUri },
      timeoutMs: 15 * 60_000,
    };
    const options = { stateDir, pollMs: 500 };
    const runner = new LocalRunner(options);
    const running = runner.runBatch(request);
    // A restarted dispatcher asks for the same batch while it runs: it follows that launch.
    const runsLog = join(runner.batchDir(request), 'runs.log');
    while ((await readFile(runsLog, 'utf8').catch(() => '')) === '') await sleep(200);
    second = await new LocalRunner(options).runBatch(request);
    first = await running;
    after = await dispatchTables(
      KEYS.filter((key) => key !== 'odd-name'),
      tableOptions,
      { truthOnly: true },
    );
  }, 1_200_000);

  it('launches one spark-submit for the batch, which the second caller follows', async () => {
    expect(first.reattached).toBe(false);
    expect(second.reattached).toBe(true);
    const dir = new LocalRunner({ stateDir }).batchDir(request);
    const launches = (await readFile(join(dir, 'runs.log'), 'utf8')).trim().split('\n');
    expect(launches).toHaveLength(1);
    expect(JSON.parse(launches[0]!)).toMatchObject({
      batchRun: request.batchRun,
      taskRuns: request.tasks.map((t) => t.taskRun),
    });
    expect(await readdir(stateDir)).toHaveLength(1);
    // Both report the same end for every task.
    expect([...second.ends.entries()]).toEqual([...first.ends.entries()]);
  });

  it('commits each small table on its own: fewer files, same rows', () => {
    for (const [i, key] of [
      [0, 'unpartitioned-small-files'],
      [2, 'format-v1'],
    ] as const) {
      const end = first.ends.get(request.tasks[i]!.taskRun);
      expect(end?.ok, JSON.stringify(end)).toBe(true);
      if (end?.ok !== true) continue;
      expect(end.result?.taskId).toBe(request.tasks[i]!.task.id);
      expect(end.result?.commits?.filesRewritten).toBe(truth(key, before).dataFiles.count);
      expect(truth(key, after).currentSnapshotId).not.toBe(truth(key, before).currentSnapshotId);
      expect(truth(key, after).dataFiles.count).toBeLessThan(truth(key, before).dataFiles.count);
      expect(truth(key, after).contentChecksum).toEqual(truth(key, before).contentChecksum);
    }
  });

  it('fails only the task of the dropped table, with its own error', () => {
    const end = first.ends.get(request.tasks[1]!.taskRun);
    expect(end).toMatchObject({ ok: false, error: { kind: 'table-not-found', retryable: false } });
    expect(first.ends.size).toBe(3);
  });

  it('answers a later call from the result files, launching nothing', async () => {
    const again = await new LocalRunner({ stateDir }).runBatch(request);
    expect(again.reattached).toBe(true);
    expect([...again.ends.entries()]).toEqual([...first.ends.entries()]);
    const dir = new LocalRunner({ stateDir }).batchDir(request);
    expect((await readFile(join(dir, 'runs.log'), 'utf8')).trim().split('\n')).toHaveLength(1);
  });
});
