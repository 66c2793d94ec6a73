import type { ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { BULLMQ_PREFIX, parseCatalog, queueNameForCatalog, type Task } from '@icepack/types';
import { tempDir, until } from '@icepack/test';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Annotations, Labels, SPARK_API } from '../runners/spark-application.ts';
import { taskHash } from '../runners/run-key.ts';
import {
  dispatchTables,
  dispatchTableSets,
  type DispatchTruth,
} from './testing/dispatch-tables.ts';
import { realGroup, type RealGroup } from './testing/real-group.ts';
import { cleanupTask, mergeTask } from './testing/sample-tasks.ts';
import { TaskEventLog } from './testing/task-event-log.ts';
import { WorkerProcesses } from './testing/worker-processes.ts';
import { testBinding } from './testing/test-binding.ts';

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
/** The worker processes' log lines, for a failure's diagnosis: kept. */
const workerLog = join(tmpdir(), `icepack-dispatch-crash-${suffix}.log`);

/** The batch's three tables: a catalog of their own (its queue, its worker), built with the rest. */
const batchCatalog = `crashbatch${suffix}`;
const batchTargets = [1, 2, 3].map((n) => ({
  catalogName: batchCatalog,
  prefix: `crashbatch${String(n)}_${suffix}`,
}));

/**
 * The local runner's state of the two local-runner tests. File-level: removed after the
 * describe blocks' afterAll hooks, which kill the worker processes writing there.
 */
const stateDirs = { crash: tempDir('icepack-crash-'), batch: tempDir('icepack-crash-batch-') };

let before: Record<string, DispatchTruth>;
let batchBefore: DispatchTruth[];
let redis: Redis;
let queue: Queue;
let events: TaskEventLog;
let group: RealGroup;
const workers = new WorkerProcesses(workerLog, {
  catalogName,
  catalogUri: infra.catalogUri,
  redisUrl: infra.redisUrl,
  brokers: infra.kafkaBrokers,
  lockMs: 4_000,
});

function truth(key: string, which: Record<string, DispatchTruth> = before): DispatchTruth {
  const t = which[key];
  if (t === undefined) throw new Error(`no truth for ${key}`);
  return t;
}

/** Starts a dispatcher worker process; resolves once it takes tasks. */
function startWorker(config: Record<string, unknown>): Promise<ChildProcess> {
  return workers.start(config);
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((ok) => {
    child.once('exit', () => ok());
    child.kill('SIGKILL');
  });
}

interface AppMeta {
  metadata: { name: string; annotations?: Record<string, string> };
}

/** The task's SparkApplications (by the task-id label) in the catalog's namespace. */
async function appsOf(task: Task): Promise<AppMeta[]> {
  const list = (await group.admin.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
    ...SPARK_API,
    namespace: group.namespace,
    labelSelector: `${Labels.taskId}=${taskHash(task.id, 32)}`,
  })) as { items: AppMeta[] };
  return list.items;
}

/** The driver pods the kubelet stand-in ran in the group's namespace, by pod name. */
function driverRuns(): string[] {
  return group.kubelet.runs.filter((r) => r.namespace === group.namespace).map((r) => r.pod);
}

/** How a worker process reaches the real API server: the chart's dispatcher rights only. */
function operatorWorker(): Record<string, unknown> {
  return {
    runner: 'spark-operator',
    kubeconfig: infra.kube.kubeconfig,
    kubeToken: group.dispatcher.token,
    stateDir: '',
  };
}

/**
 * Waits until BullMQ has completed the task's job. A worker killed before that leaves the job
 * active: the next test's worker would take it up again once its lock lapses (and the
 * crash-after-outcome worker would die on that task's event instead of its own).
 */
async function completed(task: Task): Promise<void> {
  await until(
    async () => (await queue.getJob(task.id)) === undefined,
    'the job to be completed',
    600_000,
  );
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
    // The real control plane: the group made by the provisioner's adapter, the real Spark
    // operator, the kubelet stand-in running the driver pods (one entry per run).
    group = await realGroup({
      kube: infra.kube,
      binding: testBinding(catalogName, { runner: 'spark-operator' }),
      catalog: parseCatalog({ name: catalogName, type: 'rest', uri: infra.catalogUri }),
      sparkJars: infra.sparkJars,
      suffix,
    });
  }, 900_000);

  afterAll(async () => {
    await workers.killAll();
    await group.cleanup();
    await queue.obliterate({ force: true });
    await queue.close();
    await events.stop();
    redis.disconnect();
  });

  it('local runner: SIGKILL while Spark runs → after restart it re-attaches; one run', async () => {
    const stateDir = stateDirs.crash;
    const task = mergeTask(truth('unpartitioned-small-files'), 5);
    const first = await startWorker({ runner: 'local', stateDir });
    await enqueue(task);
    // The run is launched (marker and pid written) …
    const runDir = await until(
      async () => {
        const dirs = await readdir(stateDir);
        for (const d of dirs) {
          const log = await readFile(join(stateDir, d, 'runs.log'), 'utf8').catch(() => '');
          if (log !== '') return join(stateDir, d);
        }
        return undefined;
      },
      'the launch',
      600_000,
    );
    await kill(first);
    const second = await startWorker({ runner: 'local', stateDir });
    const done = await events.waitFor(task.id, ['succeeded', 'failed'], 900_000);
    await completed(task);
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
    const first = await startWorker(operatorWorker());
    await enqueue(task);
    await until(async () => (await appsOf(task)).length > 0, 'the SparkApplication', 600_000);
    await kill(first);
    const second = await startWorker(operatorWorker());
    const done = await events.waitFor(task.id, ['succeeded', 'failed'], 900_000);
    await completed(task);
    await kill(second);
    expect(done.status).toBe('succeeded');
    const apps = await appsOf(task);
    expect(apps).toHaveLength(1);
    expect(apps[0]?.metadata.annotations?.[Annotations.taskId]).toBe(task.id);
    // One driver pod ran, that application's: the first run in this namespace.
    expect(driverRuns()).toEqual([`${apps[0]?.metadata.name}-driver`]);
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
    const runsBefore = driverRuns();
    const first = await startWorker({
      ...operatorWorker(),
      crashAfterOutcome: true,
      ttlSeconds: 10,
    });
    const died = new Promise((ok) => first.once('exit', ok));
    await enqueue(task);
    await died;
    expect((await events.waitFor(task.id, ['succeeded', 'failed'])).status).toBe('succeeded');
    // The real operator deletes a finished application after its timeToLiveSeconds.
    await until(
      async () => (await appsOf(task)).length === 0,
      'the SparkApplication to be garbage-collected',
      600_000,
    );
    const second = await startWorker(operatorWorker());
    await completed(task);
    await kill(second);
    expect(await appsOf(task)).toEqual([]);
    expect(events.of(task.id).filter((e) => e.status === 'started')).toHaveLength(1);
    expect(events.of(task.id).map((e) => e.status)).not.toContain('failed');
    // One run under one id, its driver pod the only one that ran for this task.
    const runIds = new Set(events.of(task.id).map((e) => e.runId));
    expect(runIds.size).toBe(1);
    expect(driverRuns()).toEqual([...runsBefore, `${[...runIds][0]}-driver`]);
    events.expectLifecycle(task.id);
  }, 1_200_000);
});

// Its own tables, events and no Kubernetes group: runnable alone (`-t mid-batch`) without the
// control plane the operator cases above start.
describe('a dispatcher killed mid-batch runs no task of the batch twice and loses none', () => {
  let batchEvents: TaskEventLog;
  let batchRedis: Redis;

  beforeAll(async () => {
    const sets = await dispatchTableSets(['unpartitioned-small-files'], tableOptions, batchTargets);
    batchBefore = sets.map((set) => truth('unpartitioned-small-files', set));
    batchRedis = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
    batchEvents = new TaskEventLog(infra.kafkaBrokers, (e) => e.table.catalog === batchCatalog);
    await batchEvents.start();
  }, 900_000);

  afterAll(async () => {
    await workers.killAll();
    await batchEvents.stop();
    batchRedis.disconnect();
  });

  it('local runner: SIGKILL mid-batch → after restart each task of the batch reports once; none runs twice, none is lost', async () => {
    const stateDir = stateDirs.batch;
    const tasks = batchBefore.map((t) => mergeTask(t, 5));
    const batchQueue = new Queue(queueNameForCatalog(batchCatalog), {
      connection: batchRedis,
      prefix: BULLMQ_PREFIX,
    });
    try {
      // Enqueued before the worker starts: its one slot takes one, which takes the others.
      for (const task of tasks)
        await batchQueue.add(task.type, task, {
          jobId: task.id,
          priority: 1,
          removeOnComplete: true,
          removeOnFail: true,
        });
      const config = { runner: 'local', stateDir, catalogName: batchCatalog, batch: true };
      const first = await startWorker(config);
      // Mid-batch: the batch is launched and a first task has its result, not all of them.
      const batchDir = await until(
        async () => {
          for (const d of await readdir(stateDir)) {
            const results = await readdir(join(stateDir, d, 'results')).catch((): string[] => []);
            if (results.some((f) => f !== 'batch.json')) return join(stateDir, d);
          }
          return undefined;
        },
        'a first task result of the batch',
        600_000,
      );
      await kill(first);
      const second = await startWorker(config);
      await until(
        async () => (await Promise.all(tasks.map((t) => batchQueue.getJob(t.id)))).every((j) => !j),
        'every job of the batch to be done',
        600_000,
      );
      await kill(second);
      // One launch, ever: one run directory, the batch's, launched once with all three.
      expect(await readdir(stateDir)).toEqual([basename(batchDir)]);
      const launches = (await readFile(join(batchDir, 'runs.log'), 'utf8')).trim().split('\n');
      expect(launches).toHaveLength(1);
      expect((JSON.parse(launches[0]!) as { taskRuns: string[] }).taskRuns).toHaveLength(3);
      for (const task of tasks) {
        await batchEvents.waitFor(task.id, ['succeeded', 'failed']);
        const mine = batchEvents.of(task.id);
        batchEvents.expectLifecycle(task.id);
        // Reported once, under the batch's id, from its own result (each task has one).
        expect(mine.map((e) => e.status)).toEqual(['started', 'succeeded']);
        expect(new Set(mine.map((e) => e.runId))).toEqual(new Set([basename(batchDir)]));
        await readFile(join(batchDir, 'results', `${taskHash(task.id)}.json`), 'utf8');
        // One commit: a second run would have found the one file left and committed nothing,
        // a lost task none at all.
        const done = mine[1]!;
        expect(done.after?.dataFiles).toBe(1);
        expect(done.after?.snapshots).toBe((done.before?.snapshots ?? NaN) + 1);
      }
    } finally {
      await batchQueue.obliterate({ force: true });
      await batchQueue.close();
    }
  }, 1_200_000);
});
