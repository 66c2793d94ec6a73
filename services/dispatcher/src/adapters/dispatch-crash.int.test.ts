import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { kubeConfigFor, startFakeKubeApi, type FakeKubeApi } from '@icepack/test/k8s';
import { BULLMQ_PREFIX, queueNameForCatalog, type Task } from '@icepack/types';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Annotations, Labels, SPARK_API } from '../runners/spark-application.ts';
import { StandinOperator } from '../runners/testing/standin-operator.ts';
import { taskHash } from '../runners/run-key.ts';
import { dispatchTables, type DispatchTruth } from './testing/dispatch-tables.ts';
import { cleanupTask, mergeTask } from './testing/sample-tasks.ts';
import { TaskEventLog } from './testing/task-event-log.ts';

const infra = inject('infra');
const suffix = Math.random().toString(36).slice(2, 8);
const catalogName = `crash${suffix}`;
const tableOptions = {
  python: infra.python,
  catalogUri: infra.catalogUri,
  sparkJars: infra.sparkJars,
  catalogName,
  prefix: `crash_${suffix}`,
};
const KEYS = ['unpartitioned-small-files', 'odd-name'];
const workerScript = resolve(import.meta.dirname, 'testing', 'worker-process.ts');

let before: Record<string, DispatchTruth>;
let redis: Redis;
let queue: Queue;
let events: TaskEventLog;
let kube: FakeKubeApi;
let operator: StandinOperator;
const children = new Set<ChildProcess>();

function truth(key: string, which: Record<string, DispatchTruth> = before): DispatchTruth {
  const t = which[key];
  if (t === undefined) throw new Error(`no truth for ${key}`);
  return t;
}

/** Starts a dispatcher worker process; resolves once it takes tasks. */
function startWorker(config: Record<string, unknown>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [workerScript], {
    env: {
      ...process.env,
      ICEPACK_TEST_WORKER: JSON.stringify({
        catalogName,
        catalogUri: infra.catalogUri,
        redisUrl: infra.redisUrl,
        brokers: infra.kafkaBrokers,
        lockMs: 4_000,
        ...config,
      }),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  return new Promise((ok, fail) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) ok(child);
    });
    child.on('exit', (code) => fail(new Error(`worker exited ${String(code)} before ready`)));
  });
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((ok) => {
    child.once('exit', () => ok());
    child.kill('SIGKILL');
  });
}

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 600_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

interface AppMeta {
  metadata: { name: string; annotations?: Record<string, string> };
}

/** The task's SparkApplications (by the task-id label) in the catalog's namespace. */
async function appsOf(task: Task): Promise<AppMeta[]> {
  const list = (await kubeConfigFor(kube.url)
    .makeApiClient(CustomObjectsApi)
    .listNamespacedCustomObject({
      ...SPARK_API,
      namespace: `icepack-${catalogName}`,
      labelSelector: `${Labels.taskId}=${taskHash(task.id, 32)}`,
    })) as { items: AppMeta[] };
  return list.items;
}

async function enqueue(task: Task): Promise<void> {
  await queue.add(task.type, task, {
    jobId: task.id,
    priority: 1,
    removeOnComplete: true,
    removeOnFail: true,
  });
}

describe('a dispatcher killed mid-job starts no second Spark run', () => {
  beforeAll(async () => {
    before = await dispatchTables(KEYS, tableOptions);
    redis = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
    queue = new Queue(queueNameForCatalog(catalogName), {
      connection: redis,
      prefix: BULLMQ_PREFIX,
    });
    events = new TaskEventLog(infra.kafkaBrokers, (e) => e.table.catalog === catalogName);
    await events.start();
    kube = await startFakeKubeApi();
    const kc = kubeConfigFor(kube.url);
    await kc
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: `icepack-${catalogName}` } } });
    operator = new StandinOperator({ kubeConfig: kc, sparkJars: infra.sparkJars, pollMs: 300 });
    operator.start();
  }, 900_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    operator.stop();
    await kube.stop();
    await queue.obliterate({ force: true });
    await queue.close();
    await events.stop();
    redis.disconnect();
  });

  it('local runner: SIGKILL while Spark runs → after restart it re-attaches; one run', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'icepack-crash-'));
    const task = mergeTask(truth('unpartitioned-small-files'), 5);
    const first = await startWorker({ runner: 'local', stateDir });
    await enqueue(task);
    // The run is launched (marker and pid written) …
    const runDir = await until('the launch', async () => {
      const dirs = await readdir(stateDir);
      for (const d of dirs) {
        const log = await readFile(join(stateDir, d, 'runs.log'), 'utf8').catch(() => '');
        if (log !== '') return join(stateDir, d);
      }
      return undefined;
    });
    await kill(first);
    const second = await startWorker({ runner: 'local', stateDir });
    const done = await events.waitFor(task.id, ['succeeded', 'failed'], 900_000);
    await kill(second);
    expect(done.status).toBe('succeeded');
    const runs = (await readFile(join(runDir, 'runs.log'), 'utf8')).trim().split('\n');
    expect(runs).toHaveLength(1);
    expect(await readdir(stateDir)).toHaveLength(1);
    expect(done.after?.dataFiles).toBe(1);
    expect(events.of(task.id).filter((e) => e.status === 'started')).toHaveLength(1);
    // Both dispatchers report the one run under one id: its run directory.
    expect(new Set(events.of(task.id).map((e) => e.runId))).toEqual(new Set([basename(runDir)]));
    events.expectLifecycle(task.id);
  }, 1_200_000);

  it('spark-operator runner: SIGKILL after the SparkApplication exists → re-attach (409), one application, one run', async () => {
    const task = mergeTask(truth('odd-name'), 2);
    const first = await startWorker({ runner: 'spark-operator', kubeUrl: kube.url, stateDir: '' });
    await enqueue(task);
    await until('the SparkApplication', async () =>
      (await appsOf(task)).length > 0 ? true : undefined,
    );
    await kill(first);
    const second = await startWorker({ runner: 'spark-operator', kubeUrl: kube.url, stateDir: '' });
    const done = await events.waitFor(task.id, ['succeeded', 'failed'], 900_000);
    await kill(second);
    expect(done.status).toBe('succeeded');
    const apps = await appsOf(task);
    expect(apps).toHaveLength(1);
    expect(apps[0]?.metadata.annotations?.[Annotations.taskId]).toBe(task.id);
    expect(operator.launchesOf(task.id), JSON.stringify(operator.launchLog)).toBe(1);
    expect(operator.launches.get(apps[0]?.metadata.name ?? '')).toBe(1);
    // Both dispatchers report the one run under one id: the SparkApplication's name.
    expect(new Set(events.of(task.id).map((e) => e.runId))).toEqual(
      new Set([apps[0]?.metadata.name]),
    );
    events.expectLifecycle(task.id);
    // Same outcome as the local runner: fewer files, same rows.
    const after = await dispatchTables(['odd-name'], tableOptions, { truthOnly: true });
    expect(truth('odd-name', after).dataFiles.count).toBeLessThan(
      truth('odd-name').dataFiles.count,
    );
    expect(truth('odd-name', after).contentChecksum).toEqual(truth('odd-name').contentChecksum);
  }, 1_200_000);

  it('spark-operator runner: SIGKILL after the outcome is reported but before the job is completed, application garbage-collected meanwhile → the restarted dispatcher runs nothing', async () => {
    const task = cleanupTask(truth('unpartitioned-small-files'), 3, new Date());
    // The first dispatcher kills itself right after its `succeeded` event: the job stays
    // active in BullMQ; its lock lapses and the restarted dispatcher takes it again.
    const first = await startWorker({
      runner: 'spark-operator',
      kubeUrl: kube.url,
      stateDir: '',
      crashAfterOutcome: true,
      ttlSeconds: 10,
    });
    const died = new Promise((ok) => first.once('exit', ok));
    await enqueue(task);
    await died;
    expect((await events.waitFor(task.id, ['succeeded', 'failed'])).status).toBe('succeeded');
    // The operator deletes a finished application after its timeToLiveSeconds.
    await until('the SparkApplication to be garbage-collected', async () =>
      (await appsOf(task)).length === 0 ? true : undefined,
    );
    const second = await startWorker({ runner: 'spark-operator', kubeUrl: kube.url, stateDir: '' });
    await until('the job to be completed', async () =>
      (await queue.getJob(task.id)) === undefined ? true : undefined,
    );
    await kill(second);
    expect(operator.launchesOf(task.id), JSON.stringify(operator.launchLog)).toBe(1);
    expect(await appsOf(task)).toEqual([]);
    expect(events.of(task.id).filter((e) => e.status === 'started')).toHaveLength(1);
    expect(events.of(task.id).map((e) => e.status)).not.toContain('failed');
    expect(new Set(events.of(task.id).map((e) => e.runId))).toEqual(
      new Set([operator.launchLog.find((l) => l.taskId === task.id)?.name]),
    );
    events.expectLifecycle(task.id);
  }, 1_200_000);
});
