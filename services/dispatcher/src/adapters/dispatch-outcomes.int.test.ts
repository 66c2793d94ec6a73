import { CustomObjectsApi } from '@kubernetes/client-node';
import { RestCatalog } from '@icepack/iceberg';
import { createLogger, EnvelopeProducer, KafkaClient } from '@icepack/runtime';
import { tempDir } from '@icepack/test';
import {
  BULLMQ_PREFIX,
  parseCatalog,
  queueNameForCatalog,
  sizingSamplesKey,
  type Binding,
  type Task,
} from '@icepack/types';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LocalRunner } from '../runners/local-runner.ts';
import { Annotations, BATCH_TYPE, Labels, SPARK_API } from '../runners/spark-application.ts';
import { SparkOperatorRunner } from '../runners/spark-operator-runner.ts';
import type { SparkRunner } from '../runners/spark-runner.ts';
import { KubeQuota } from './kube-quota.ts';
import { LocalBudgetQuota, type QuotaGate } from './quota.ts';
import { LearnedSizingStore } from './sizing-store.ts';
import { CatalogTableHealth } from './table-health.ts';
import { KafkaDispatchSink } from './task-events.ts';
import { TaskWorker } from './task-worker.ts';
import {
  dispatchTables,
  dispatchTableSets,
  type DispatchTableTarget,
  type DispatchTruth,
} from './testing/dispatch-tables.ts';
import { realGroup } from './testing/real-group.ts';
import { cleanupTask, mergeTask, sortTask } from './testing/sample-tasks.ts';
import { TaskEventLog } from './testing/task-event-log.ts';
import { testBinding } from './testing/test-binding.ts';

const infra = inject('infra');
const suffix = Math.random().toString(36).slice(2, 8);
const KEYS = ['unpartitioned-small-files', 'sorted', 'many-snapshots', 'odd-name'];
const logger = createLogger({ service: 'dispatch-test', level: 'warn' });
/** The local runner's state: removed after the afterAll that closes its variant's worker. */
const localStateDir = tempDir('icepack-runs-');
const sparkOptions = {
  python: infra.python,
  catalogUri: infra.catalogUri,
  sparkJars: infra.sparkJars,
};

/** What a runner brings to the worker: how it runs Spark and where it reads the quota. */
interface RunnerSetup {
  readonly runner: SparkRunner;
  readonly quota: QuotaGate;
  /** Stops what the setup started (the worker closes the quota). */
  readonly stop: () => Promise<void>;
  /**
   * The operator runner's SparkApplications (the ids of the tasks each ran: one, or a batch's;
   * whether it is a batch's; its state) and the driver pods that ran.
   */
  readonly kube?: {
    readonly applications: () => Promise<
      { name: string; taskIds: string[]; batch: boolean; state: string }[]
    >;
    readonly driverPods: () => string[];
  };
}

interface Variant extends DispatchTableTarget {
  readonly name: Binding['runner'];
  readonly setUp: (binding: Binding, redis: Redis) => Promise<RunnerSetup>;
  /** What the failed task event says for a job that failed with exit code 2 (bad input). */
}

const variants: Variant[] = [
  {
    name: 'local',
    catalogName: `disp${suffix}`,
    prefix: `local_${suffix}`,
    setUp: (_binding, redis) =>
      Promise.resolve({
        runner: new LocalRunner({ stateDir: localStateDir }),
        quota: new LocalBudgetQuota({ redis, prefix: `test-${suffix}` }),
        stop: () => Promise.resolve(),
      }),
  },
  {
    name: 'spark-operator',
    catalogName: `dispop${suffix}`,
    prefix: `operator_${suffix}`,
    // The real control plane (deploy/local/k8s.sh): the group's namespace and ResourceQuota made
    // by the provisioner's adapter, its `used` filled by the real quota controller from the driver
    // pods; the real Spark operator; the kubelet stand-in running each driver with the local
    // Spark. The dispatcher acts with a token bound to the chart's dispatcher ClusterRole only.
    setUp: async (binding) => {
      const group = await realGroup({
        kube: infra.kube,
        binding,
        catalog: parseCatalog({ name: binding.catalog, type: 'rest', uri: infra.catalogUri }),
        sparkJars: infra.sparkJars,
        suffix,
      });
      const { kubeConfig } = group.dispatcher;
      return {
        runner: new SparkOperatorRunner({ kubeConfig, pollMs: 500 }),
        quota: new KubeQuota(kubeConfig),
        stop: () => group.cleanup(),
        kube: {
          applications: async () => {
            const list = (await group.admin
              .makeApiClient(CustomObjectsApi)
              .listNamespacedCustomObject({ ...SPARK_API, namespace: group.namespace })) as {
              items: {
                metadata: {
                  name: string;
                  labels?: Record<string, string>;
                  annotations?: Record<string, string>;
                };
                status?: { applicationState?: { state?: string } };
              }[];
            };
            return list.items.map(({ metadata, status }) => {
              const batch = metadata.labels?.[Labels.taskType] === BATCH_TYPE;
              const ids = metadata.annotations?.[batch ? Annotations.taskIds : Annotations.taskId];
              return {
                name: metadata.name,
                taskIds: (ids ?? '').split('\n'),
                batch,
                state: status?.applicationState?.state ?? '',
              };
            });
          },
          driverPods: () => group.kubelet.runs.map((run) => run.pod),
        },
      };
    },
  },
];

let built: Record<string, DispatchTruth>[];

// One Spark session builds both variants' tables (each in its own namespace).
beforeAll(async () => {
  built = await dispatchTableSets(KEYS, sparkOptions, variants);
}, 900_000);

function truth(key: string, which: Record<string, DispatchTruth>): DispatchTruth {
  const t = which[key];
  if (t === undefined) throw new Error(`no truth for ${key}`);
  return t;
}

describe.each(variants.map((variant, i) => ({ ...variant, index: i })))(
  'dispatch with the $name runner on real fixture tables',
  (variant) => {
    const { catalogName } = variant;
    let before: Record<string, DispatchTruth>;
    let after: Record<string, DispatchTruth>;
    let redis: Redis;
    let kafka: KafkaClient;
    let producer: EnvelopeProducer;
    let events: TaskEventLog;
    let setup: RunnerSetup;
    let worker: TaskWorker;
    let sizing: LearnedSizingStore;
    let queue: Queue;
    const tasks: Record<string, Task> = {};

    beforeAll(async () => {
      before = built[variant.index]!;
      redis = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
      kafka = new KafkaClient({ brokers: infra.kafkaBrokers, clientId: 'dispatch-test', logger });
      producer = new EnvelopeProducer(kafka);
      await producer.connect();
      events = new TaskEventLog(infra.kafkaBrokers, (e) => e.table.catalog === catalogName);
      await events.start();
      const catalog = new RestCatalog({ name: catalogName, uri: infra.catalogUri });
      // Room for one small job at a time (driver 1 core + executor 1 core): the second task
      // has to wait for quota, then runs.
      const binding = testBinding(catalogName, {
        cpu: '3',
        memory: '8Gi',
        slots: 2,
        runner: variant.name,
      });
      setup = await variant.setUp(binding, redis);
      // Not refreshed here: jobs are sized from the prior, as the quota wait below expects.
      sizing = new LearnedSizingStore({ redis, catalog: catalogName, logger });
      worker = new TaskWorker({
        sizingModel: sizing,
        binding,
        connection: redis,
        runner: setup.runner,
        quota: setup.quota,
        sink: new KafkaDispatchSink(producer),
        health: new CatalogTableHealth(() => catalog),
        catalog: { name: catalogName, uri: infra.catalogUri },
        logger,
        quotaWaitMs: 2_000,
        timeoutMs: 15 * 60_000,
        // Batched runs, as the service runs by default (ICEPACK_DISPATCHER_BATCH): which tasks
        // share an application depends on which the worker's slots take first, so what follows
        // holds whichever ran together.
        batch: {},
      });
      queue = new Queue(queueNameForCatalog(catalogName), {
        connection: redis,
        prefix: BULLMQ_PREFIX,
      });

      tasks.merge = mergeTask(truth('unpartitioned-small-files', before), 5);
      tasks.sort = sortTask(truth('sorted', before), 'sort', [
        { name: 'event_ts', direction: 'asc', nullOrder: 'nulls-first' },
        { name: 'id', direction: 'desc', nullOrder: 'nulls-last' },
      ]);
      tasks.cleanup = cleanupTask(
        truth('many-snapshots', before),
        5,
        new Date(Date.now() + 60_000),
      );
      tasks.odd = mergeTask(truth('odd-name', before), 2);
      // A z-order on a column the table does not have: the job fails, and says why.
      tasks.failing = sortTask(truth('odd-name', before), 'zorder', [{ name: 'no_such_column' }]);
      let priority = 1;
      for (const task of Object.values(tasks)) {
        await queue.add(task.type, task, {
          jobId: task.id,
          priority: priority++,
          removeOnComplete: true,
          removeOnFail: true,
        });
      }
      await worker.start();
      for (const task of Object.values(tasks))
        await events.waitFor(task.id, ['succeeded', 'failed'], 1_500_000);
      after = await dispatchTables(
        KEYS,
        { ...sparkOptions, catalogName, prefix: variant.prefix },
        { truthOnly: true, fileRows: ['sorted'] },
      );
    }, 1_800_000);

    afterAll(async () => {
      await worker.close(true);
      await setup.stop();
      await queue.obliterate({ force: true });
      await queue.close();
      await redis.del(sizingSamplesKey(catalogName));
      await events.stop();
      await producer.disconnect();
      await kafka.close();
      redis.disconnect();
    });

    it("publishes each task's events in an order the task lifecycle allows", () => {
      for (const task of Object.values(tasks)) events.expectLifecycle(task.id);
    });

    it('merge turns the small files into few files; rows and content unchanged', async () => {
      const b = truth('unpartitioned-small-files', before);
      const a = truth('unpartitioned-small-files', after);
      expect(b.dataFiles.count).toBe(60);
      expect(a.dataFiles.count).toBe(1);
      expect(a.contentChecksum).toEqual(b.contentChecksum);
      expect(a.recordCount).toBe(b.recordCount);
      const done = await events.waitFor(tasks.merge!.id, ['succeeded']);
      expect(done.before).toMatchObject({ dataFiles: 60, smallFiles: 60 });
      expect(done.after).toMatchObject({
        dataFiles: 1,
        smallFiles: 1,
        snapshots: b.snapshotCount + 1,
      });
      expect(done.after!.bytes).toBeLessThan(done.before!.bytes);
    });

    it('records a sizing sample per succeeded run from its result: bytes, files, CPU used, cores and wall time', async () => {
      const measured = [];
      for (const task of Object.values(tasks)) {
        const end = await events.waitFor(task.id, ['succeeded', 'failed']);
        const cost = end.cost;
        // A run leaves a sample when the runner read its result (its commits or its CPU).
        if (end.status !== 'succeeded' || cost === undefined) continue;
        if (cost.bytesRead === undefined && cost.coreSecondsUsed === undefined) continue;
        measured.push({
          bytes: cost.bytesRead,
          files: cost.filesRewritten,
          wallMs: cost.runMs,
          cores: Math.round((cost.coreSecondsRequested * 1000) / cost.runMs),
          outcome: 'ok',
        });
      }
      // Both runners read every succeeded run's figures — merge, sort, cleanup and the odd
      // name — the spark-operator runner a batched task's from its compact outcome in the
      // driver's termination message, a single run's from its result line there.
      expect(measured).toHaveLength(4);
      const samples = await sizing.samples();
      const key = (s: { bytes?: number; wallMs: number }) =>
        `${String(s.bytes)}@${String(s.wallMs)}`;
      expect(
        samples
          .map((s) => ({
            bytes: s.bytes,
            files: s.files,
            wallMs: s.wallMs,
            cores: s.cores,
            outcome: s.outcome,
          }))
          .sort((a, b) => key(a).localeCompare(key(b))),
      ).toEqual(measured.sort((a, b) => key(a).localeCompare(key(b))));
      const merge = await events.waitFor(tasks.merge!.id, ['succeeded']);
      const mergeSample = samples.find((s) => s.wallMs === merge.cost?.runMs);
      expect(mergeSample?.bytes).toBeGreaterThan(0);
      expect(mergeSample?.files).toBe(60);
      if (variant.name === 'spark-operator') {
        // Batched on Kubernetes (batching is on by default): the tasks that shared an
        // application recorded what they rewrote, from the driver's termination message.
        const apps = await setup.kube!.applications();
        const batched = apps
          .filter((app) => app.batch)
          .flatMap((app) => app.taskIds)
          .filter((id) => id !== tasks.failing!.id && id !== tasks.cleanup!.id);
        expect(batched.length).toBeGreaterThan(0);
        for (const id of batched) {
          const done = await events.waitFor(id, ['succeeded']);
          const sample = samples.find((s) => s.wallMs === done.cost?.runMs);
          expect(sample?.bytes, id).toBeGreaterThan(0);
          expect(sample?.files, id).toBeGreaterThan(0);
          expect(done.cost?.bytesRead, id).toBe(sample?.bytes);
        }
      }
      if (variant.name === 'local') {
        expect(mergeSample?.cpuSeconds).toBeGreaterThan(0);
        // The driver JVM's heap peak (local mode: the executors are its threads), over its cores.
        expect(mergeSample?.peakHeapBytes).toBeGreaterThan(0);
        expect(mergeSample?.heapCores).toBeGreaterThanOrEqual(1);
        expect(mergeSample?.heapPerCoreBytes).toBeGreaterThan(0);
      }
    });

    it('sort leaves every data file sorted by the task order; content unchanged', () => {
      const b = truth('sorted', before);
      const a = truth('sorted', after);
      expect(a.contentChecksum).toEqual(b.contentChecksum);
      expect(a.dataFiles.count).toBeLessThan(b.dataFiles.count);
      // Columns: id, kind, payload, score, event_ts → (event_ts asc nulls first, id desc).
      for (const rows of a.fileRows ?? []) {
        const keys = rows.map((r) => [r[4] ?? '', Number(r[0])] as const);
        const ordered = [...keys].sort((x, y) =>
          x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : y[1] - x[1],
        );
        expect(keys).toEqual(ordered);
      }
      expect(a.fileRows?.flat()).toHaveLength(b.recordCount);
    });

    it('expire keeps the last 5 of main, the branch head and the tagged snapshot only', () => {
      const b = truth('many-snapshots', before);
      const a = truth('many-snapshots', after);
      const parent = new Map(b.snapshots.map((s) => [s.snapshotId, s.parentId]));
      const main: string[] = [];
      for (
        let id = b.currentSnapshotId;
        id !== null && main.length < 5;
        id = parent.get(id) ?? null
      )
        main.push(id);
      const tag = b.refs.find((r) => r.name === 'release-1')!.snapshotId;
      const branch = b.refs.find((r) => r.name === 'audit')!.snapshotId;
      expect([...a.snapshotIds].sort()).toEqual([...new Set([...main, tag, branch])].sort());
      expect(a.refs).toEqual(b.refs);
      expect(a.contentChecksum).toEqual(b.contentChecksum);
    });

    it('handles the table named with a dot, space, quote and backtick', async () => {
      const b = truth('odd-name', before);
      const a = truth('odd-name', after);
      expect(a.id.name).toBe("odd.name with 'quote' and `tick`");
      expect(a.dataFiles.count).toBeLessThan(b.dataFiles.count);
      expect(a.contentChecksum).toEqual(b.contentChecksum);
      expect((await events.waitFor(tasks.odd!.id, ['succeeded'])).status).toBe('succeeded');
    });

    // Both runners report the job's own error: the local one from its result file, the
    // operator one from the driver container's termination message.
    it("puts a failing job's error message on the failed task event", async () => {
      const failed = await events.waitFor(tasks.failing!.id, ['failed', 'succeeded']);
      expect(failed.status).toBe('failed');
      expect(failed.error).toMatchObject({ kind: 'bad-input', retryable: false });
      expect(failed.error?.message).toMatch(/no_such_column/);
      expect(
        events
          .of(tasks.failing!.id)
          .map((e) => e.status)
          .filter((s) => s !== 'updated'),
      ).toEqual(['started', 'failed']);
    });

    // Registered for the operator variant only (no skipped test for the local one).
    if (variant.name === 'spark-operator')
      it('runs each task in exactly one SparkApplication (its own or a batch’s) that the real operator ends COMPLETED — FAILED only for the failing task’s own — its driver pod run once by the kubelet stand-in', async () => {
        const kube = setup.kube!;
        const apps = await kube.applications();
        expect(apps.flatMap((app) => app.taskIds).sort()).toEqual(
          Object.values(tasks)
            .map((task) => task.id)
            .sort(),
        );
        // A batch succeeds when each of its tasks has its end, the failing one's included.
        for (const app of apps)
          expect(app.state, app.name).toBe(
            !app.batch && app.taskIds[0] === tasks.failing!.id ? 'FAILED' : 'COMPLETED',
          );
        expect(kube.driverPods().sort()).toEqual(apps.map((app) => `${app.name}-driver`).sort());
      });

    it('lets a task wait for quota (put back, not failed) and then run', () => {
      const waited = Object.values(tasks).filter((t) =>
        events
          .of(t.id)
          .some((e) => e.status === 'updated' && /waiting for quota/.test(e.reason ?? '')),
      );
      expect(waited.length).toBeGreaterThan(0);
      for (const task of waited) {
        const statuses = events.of(task.id).map((e) => e.status);
        expect(statuses.at(-1)).toMatch(/succeeded|failed/);
        expect(statuses).toContain('started');
      }
    });
  },
);
