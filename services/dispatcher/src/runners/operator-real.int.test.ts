import { randomBytes } from 'node:crypto';
import {
  CoreV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
  Watch,
  type KubeConfig,
  type V1PolicyRule,
} from '@kubernetes/client-node';
import { ofKind, renderChart } from '@icepack/test/deploy';
import { RestCatalog } from '@icepack/iceberg';
import { createLogger } from '@icepack/runtime';
import {
  adminKubeConfig,
  notAuthorized,
  serviceAccountKubeConfig,
  startCatalogProxy,
  startKubeletStandin,
  tableTruth,
  until,
  type KubeletStandin,
  type ServiceAccountAccess,
} from '@icepack/test';
import {
  parseCatalog,
  parseResourceGroup,
  queueNameForCatalog,
  type Catalog,
  type TableId,
  type Task,
} from '@icepack/types';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
// The provisioner's own Kubernetes adapter makes the group's namespace and objects, so the run
// below lands where production runs land (test-only import across services).
import { provisionGroup } from '@icepack/provisioner/testing';
import { sizeJob } from '../domain/sizing.ts';
import type { QuotaGate } from '../adapters/quota.ts';
import { InMemoryDispatchSink } from '../adapters/task-events.ts';
import { TaskWorker } from '../adapters/task-worker.ts';
import { dispatchTables, type DispatchTruth } from '../adapters/testing/dispatch-tables.ts';
import { mergeTask, sortTask } from '../adapters/testing/sample-tasks.ts';
import { testBinding } from '../adapters/testing/test-binding.ts';
import {
  CATALOG_CONFIG_DIR,
  RESTRICTED_CONTAINER_SECURITY,
  RESTRICTED_POD_SECURITY,
  SPARK_API,
} from './spark-application.ts';
import { SparkOperatorRunner } from './spark-operator-runner.ts';
import {
  endFigures,
  type BatchRunRequest,
  type CatalogConnection,
  type RunRequest,
} from './spark-runner.ts';

// The dispatcher's own spark-operator runner against the real local control plane
// (deploy/local/k8s.sh): the real kube-apiserver, the real Kubeflow Spark operator with the fake
// spark-submit that creates the driver pod, and the kubelet stand-in that runs that pod's job with
// the local Spark against the local REST catalog. The namespace is made by the provisioner's
// adapter (Pod Security `restricted`, its ConfigMap, quota, LimitRange, driver account), and the
// catalog needs a bearer token that only a Secret of that namespace holds.
const infra = inject('infra');
const suffix = randomBytes(3).toString('hex');
const catalogName = `opreal${suffix}`;
const prefix = `opreal_${suffix}`;
const binding = testBinding(catalogName, { runner: 'spark-operator' });
const { namespace } = binding;
/** The catalog's credential: in the namespace's Secret, nowhere else. */
const token = randomBytes(24).toString('hex');
const secretName = 'lake-catalog';

let admin: KubeConfig;
let dispatcher: ServiceAccountAccess;
let kubelet: KubeletStandin;
let before: Record<string, DispatchTruth>;
let catalog: Catalog;
let authProxy: AuthProxy;
/** Every `status.applicationState.state` each application went through, in order. */
const states = new Map<string, string[]>();
let stopWatch: (() => void) | undefined;

interface AuthProxy {
  readonly uri: string;
  /** Requests that came with the token, and without it (refused with 401). */
  readonly seen: { authorized: number; refused: number };
  close(): Promise<void>;
}

/** The local REST catalog behind a bearer token: what a catalog with `auth` does. */
async function startAuthProxy(target: string, bearer: string): Promise<AuthProxy> {
  const seen = { authorized: 0, refused: 0 };
  const proxy = await startCatalogProxy(target, (req, res, forward) => {
    if (req.headers.authorization !== `Bearer ${bearer}`) {
      seen.refused += 1;
      req.resume();
      notAuthorized(res, 'bearer token required');
      return;
    }
    seen.authorized += 1;
    forward();
  });
  return { ...proxy, seen };
}

/** How the dispatcher passes the catalog to a run (create-catalog-worker.ts). */
function connection(): CatalogConnection {
  return {
    name: catalog.name,
    uri: catalog.uri,
    auth: catalog.auth,
    properties: catalog.properties,
  };
}

function request(task: Task): RunRequest {
  const decision = sizeJob({
    bytes: task.state.bytesToRewrite,
    files: task.state.filesToRewrite,
    minInputFiles: 2,
    spark: binding.spark,
    room: {},
  });
  return {
    taskRun: `${task.id}@${String(Date.now())}`,
    task,
    attempt: 1,
    binding,
    size: decision.size,
    catalog: connection(),
    timeoutMs: 10 * 60_000,
  };
}

/** A batch of `tasks` (ADR 0027), led by the first, sized by it as the worker sizes a batch. */
function batchRequest(tasks: readonly Task[]): BatchRunRequest {
  const { taskRun, binding: b, size, catalog: c, timeoutMs } = request(tasks[0]!);
  return {
    binding: b,
    size,
    catalog: c,
    timeoutMs,
    attempt: 1,
    batchRun: taskRun,
    tasks: tasks.map((task, i) => ({ taskRun: `${task.id}@${String(Date.now() + i)}`, task })),
  };
}

/** A table's current snapshot, from the REST catalog (no Spark session needed). */
async function currentSnapshot(table: TableId): Promise<string | null> {
  const loaded = await new RestCatalog({ name: catalogName, uri: infra.catalogUri }).loadTable(
    table,
  );
  if (loaded.status !== 'loaded') throw new Error(`${table.name} did not load: ${loaded.status}`);
  return loaded.table.metadata.currentSnapshotId;
}

function truth(key: string): DispatchTruth {
  const t = before[key];
  if (t === undefined) throw new Error(`no truth for ${key}`);
  return t;
}

beforeAll(async () => {
  admin = adminKubeConfig(infra.kube);
  const core = admin.makeApiClient(CoreV1Api);
  authProxy = await startAuthProxy(infra.catalogUri, token);
  catalog = parseCatalog({
    name: catalogName,
    type: 'rest',
    uri: authProxy.uri,
    auth: { type: 'bearer', token: { secret: { name: secretName, key: 'token' } } },
  });
  // The group's namespace and objects, as the provisioner makes them.
  const group = parseResourceGroup({
    name: catalogName,
    catalog: catalogName,
    cpu: '4',
    memory: '8Gi',
    slots: 1,
  });
  await provisionGroup(admin, `opreal-${suffix}`, group, catalog);
  // The catalog's credential, put there by whoever runs Icepack.
  await core.createNamespacedSecret({
    namespace,
    body: { metadata: { name: secretName }, stringData: { token } },
  });
  // The runner acts with the chart's dispatcher rights, bound in this namespace only (the
  // chart's `rbac.dispatcher.namespaces` mode): a right the runner needs and the chart lacks
  // is a 403 here.
  const chartRole = ofKind(renderChart(), 'ClusterRole').find(
    (role) => role.metadata.name === 'icepack-dispatcher',
  );
  if (chartRole === undefined) throw new Error('the chart renders no dispatcher ClusterRole');
  await admin.makeApiClient(RbacAuthorizationV1Api).createNamespacedRole({
    namespace,
    body: {
      metadata: { name: 'spark-applications' },
      rules: chartRole.rules as V1PolicyRule[],
    },
  });
  dispatcher = await serviceAccountKubeConfig(admin, {
    namespace,
    name: 'dispatcher',
    roles: [{ kind: 'Role', name: 'spark-applications' }],
  });
  kubelet = await startKubeletStandin({ namespaces: [namespace], sparkJars: infra.sparkJars });
  before = await dispatchTables(['unpartitioned-small-files', 'odd-name'], {
    python: infra.python,
    catalogUri: infra.catalogUri,
    sparkJars: infra.sparkJars,
    catalogName,
    prefix,
  });
  // Every state the real operator writes, per application. client-node ends a watch that
  // sees nothing for 30 s, so it is started again from the last version seen: no state of a
  // run goes unseen across the gap.
  let stopped = false;
  let current: { abort(): void } | undefined;
  let lastVersion: string | undefined;
  const watchStates = async (): Promise<void> => {
    current = await new Watch(admin).watch(
      `/apis/${SPARK_API.group}/${SPARK_API.version}/namespaces/${namespace}/${SPARK_API.plural}`,
      lastVersion === undefined ? {} : { resourceVersion: lastVersion },
      (
        type,
        app: {
          metadata: { name: string; resourceVersion?: string };
          status?: { applicationState?: { state?: string } };
        },
      ) => {
        if (type === 'ERROR') {
          lastVersion = undefined; // 410 Gone: start again from the current objects
          return;
        }
        lastVersion = app.metadata.resourceVersion ?? lastVersion;
        const state = app.status?.applicationState?.state;
        if (state === undefined || state === '') return;
        const seen = states.get(app.metadata.name) ?? [];
        if (seen.at(-1) !== state) seen.push(state);
        states.set(app.metadata.name, seen);
      },
      () => {
        if (!stopped) setTimeout(() => void watchStates(), 200);
      },
    );
  };
  await watchStates();
  stopWatch = () => {
    stopped = true;
    current?.abort();
  };
}, 600_000);

afterAll(async () => {
  stopWatch?.();
  await kubelet?.stop();
  await authProxy?.close();
  await dispatcher?.cleanup();
  await admin
    ?.makeApiClient(CoreV1Api)
    .deleteNamespace({ name: namespace })
    .catch(() => undefined);
});

describe('the spark-operator runner on the real Spark operator and API server', () => {
  it('runs a merge in a restricted group namespace, with the catalog credential only by Secret reference: SUBMITTED → RUNNING → COMPLETED, the table rewritten', async () => {
    // Pod Security `restricted` is enforced where the run goes (the provisioner labelled it).
    const ns = await admin.makeApiClient(CoreV1Api).readNamespace({ name: namespace });
    expect(ns.metadata?.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');

    const task = mergeTask(truth('unpartitioned-small-files'), 5);
    const runner = new SparkOperatorRunner({ kubeConfig: dispatcher.kubeConfig, pollMs: 500 });
    const run = request(task);
    const outcome = await runner.run(run);
    expect(outcome).toMatchObject({ ok: true, reattached: false });
    // The job's result line came back as the driver's termination message, read with the
    // chart's dispatcher rights: the ledger's own figures of the run (what it rewrote, its CPU).
    const result = outcome.ok ? outcome.result : undefined;
    expect(result?.taskId).toBe(task.id);
    expect(result?.commits?.filesRewritten).toBeGreaterThan(0);
    expect(result?.cpuSeconds).toBeGreaterThan(0);

    const name = runner.runName(run);
    expect(states.get(name)).toEqual(['SUBMITTED', 'RUNNING', 'SUCCEEDING', 'COMPLETED']);
    // The driver pod ran exactly once, with the job file and the application's arguments.
    const driverRuns = kubelet.runs.filter((r) => r.pod === `${name}-driver`);
    expect(driverRuns).toHaveLength(1);
    expect(driverRuns[0]?.exitCode).toBe(0);
    expect(driverRuns[0]?.command.mainFile).toBe('local:///opt/icepack/jobs/spark/icepack_job.py');
    expect(driverRuns[0]?.command.appArgs).toEqual(
      expect.arrayContaining(['--catalog-uri', authProxy.uri, '--task-json', JSON.stringify(task)]),
    );
    expect(driverRuns[0]?.command.conf['spark.sql.shuffle.partitions']).toBeDefined();
    // The catalog's configuration came with the application's Spark conf.
    expect(driverRuns[0]?.command.conf).toMatchObject({
      [`spark.sql.catalog.${catalogName}`]: 'org.apache.iceberg.spark.SparkCatalog',
      [`spark.sql.catalog.${catalogName}.type`]: 'rest',
      [`spark.sql.catalog.${catalogName}.uri`]: authProxy.uri,
    });

    // The driver pod the API server admitted under `restricted`: the templates' security
    // context, the provisioner's ConfigMap mounted, the credential as a Secret reference.
    const pod = await admin
      .makeApiClient(CoreV1Api)
      .readNamespacedPod({ name: `${name}-driver`, namespace });
    expect(pod.spec?.securityContext).toEqual(RESTRICTED_POD_SECURITY);
    const container = pod.spec?.containers.find((c) => c.name === 'spark-kubernetes-driver');
    expect(container?.securityContext).toEqual(RESTRICTED_CONTAINER_SECURITY);
    expect(container?.env).toContainEqual({
      name: 'ICEPACK_CATALOG_TOKEN',
      valueFrom: { secretKeyRef: { name: secretName, key: 'token' } },
    });
    const mount = container?.volumeMounts?.find((m) => m.mountPath === CATALOG_CONFIG_DIR);
    expect(pod.spec?.volumes?.find((v) => v.name === mount?.name)?.configMap?.name).toBe(
      'icepack-spark',
    );
    // No literal credential in the application, the pod or the conf Spark wrote for it.
    const app: unknown = await admin.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      ...SPARK_API,
      namespace,
      name,
    });
    const configMaps = await admin.makeApiClient(CoreV1Api).listNamespacedConfigMap({ namespace });
    for (const [what, object] of Object.entries({ app, pod, configMaps }))
      expect(JSON.stringify(object).includes(token), what).toBe(false);
    // The job reached the catalog with the Secret's token, and never without it.
    expect(authProxy.seen.authorized).toBeGreaterThan(0);
    expect(authProxy.seen.refused).toBe(0);

    // The real table: fewer data files, the same rows.
    const was = truth('unpartitioned-small-files');
    const now = await tableTruth(was.id);
    expect(now.dataFiles.count).toBeLessThan(was.dataFiles.count);
    expect(now.recordCount).toBe(was.recordCount);
    expect(now.contentChecksum).toEqual(was.contentChecksum);
    expect(now.currentSnapshotId).not.toBe(was.currentSnapshotId);
    // A bound for a loaded machine: a real Spark run, then a Spark session reading the table.
  }, 600_000);

  it("puts the job's own error, read from the driver's termination message, in the failed task event", async () => {
    // A z-order on a column the table does not have: the job exits non-zero. The task goes
    // through the dispatcher's worker (BullMQ on the real Redis) to its task event.
    const task = sortTask(truth('odd-name'), 'zorder', [{ name: 'no_such_column' }]);
    const runner = new SparkOperatorRunner({ kubeConfig: dispatcher.kubeConfig, pollMs: 500 });
    const redis = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
    const bullPrefix = `icepack-opreal-${suffix}`;
    const sink = new InMemoryDispatchSink();
    const roomy: QuotaGate = {
      room: () => Promise.resolve({}),
      acquire: () => Promise.resolve(true),
      release: () => Promise.resolve(),
    };
    const worker = new TaskWorker({
      binding,
      connection: redis,
      runner,
      quota: roomy,
      sink,
      health: {
        read: () =>
          Promise.resolve({ dataFiles: 1, smallFiles: 1, deleteFiles: 0, snapshots: 1, bytes: 1 }),
      },
      catalog: connection(),
      logger: createLogger({ service: 'operator-real-test', level: 'warn' }),
      prefix: bullPrefix,
    });
    const queue = new Queue(queueNameForCatalog(catalogName), {
      connection: redis,
      prefix: bullPrefix,
    });
    try {
      await worker.start();
      await queue.add(task.type, task, { jobId: task.id, removeOnFail: true });
      const failed = await until(
        () => sink.events.find((e) => e.status === 'failed'),
        'the failed task event',
        540_000,
        () => JSON.stringify(sink.events),
      );
      const name = failed.runId ?? '';
      const driverRun = kubelet.runs.find((r) => r.pod === `${name}-driver`);
      const exitCode = driverRun?.exitCode;
      // The job's exit code for bad input (a column the table lacks), as the local runner sees it.
      expect(exitCode).toBe(2);
      expect(states.get(name)).toEqual(['SUBMITTED', 'RUNNING', 'FAILING', 'FAILED']);
      // What the operator wrote in the application's status, word for word.
      const app = (await admin.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
        ...SPARK_API,
        namespace,
        name,
      })) as { status: { applicationState: { errorMessage: string } } };
      const reported = app.status.applicationState.errorMessage;
      expect(reported).toBe(
        `driver container failed with ExitCode: ${String(exitCode)}, Reason: Error`,
      );
      // The operator knows only the exit code; the event carries the job's own message, from
      // the termination message the kubelet kept in the driver pod's status.
      expect(failed.error).toMatchObject({ kind: 'bad-input', retryable: false });
      expect(failed.error?.message).toMatch(/no_such_column/);
      expect(failed.reason).toBe(failed.error?.message);
      expect(sink.events.map((e) => e.status)).toEqual(['started', 'failed']);
    } finally {
      await worker.close(true);
      await queue.obliterate({ force: true });
      await queue.close();
      redis.disconnect();
    }
    // The table is untouched.
    const was = truth('odd-name');
    const now = await tableTruth(was.id);
    expect(now.currentSnapshotId).toBe(was.currentSnapshotId);
    expect(now.contentChecksum).toEqual(was.contentChecksum);
    // A bound for a loaded machine: a real Spark run, then a Spark session reading the table.
  }, 600_000);
  it('runs a batch as one SparkApplication, each task to its own end (one failing alone), and a restarted dispatcher re-attaches to it by name, never launching it again', async () => {
    // First a task that fails (a z-order on a column the table lacks), then one that merges:
    // one table after another, the failure the first task's own.
    const failing = sortTask(truth('unpartitioned-small-files'), 'zorder', [
      { name: 'no_such_column' },
    ]);
    const merge = mergeTask(truth('odd-name'), 2);
    const untouched = await currentSnapshot(failing.table);
    const batch = batchRequest([failing, merge]);
    const runner = new SparkOperatorRunner({ kubeConfig: dispatcher.kubeConfig, pollMs: 500 });
    const name = runner.batchName(batch);
    const first = runner.runBatch(batch);
    // The dispatcher that launched it dies while it runs (its follow is simply not used); the
    // next one, a new runner, follows the batch for the merge's job only, as a held job does.
    await until(
      () => states.get(name)?.includes('RUNNING'),
      `batch ${name} to run`,
      300_000,
      () => JSON.stringify([...states]),
    );
    const restarted = new SparkOperatorRunner({ kubeConfig: dispatcher.kubeConfig, pollMs: 500 });
    const followed = await restarted.runBatch({ ...batch, tasks: [batch.tasks[1]!] });
    const launched = await first;

    expect(followed.reattached).toBe(true);
    expect(launched.reattached).toBe(false);
    const [failingRun, mergeRun] = batch.tasks.map((t) => t.taskRun);
    for (const outcome of [launched, followed]) {
      // The merge's own end, with its own duration (not the batch's) and what it rewrote,
      // read from the driver's termination message.
      const end = outcome.ends.get(mergeRun!);
      expect(end).toMatchObject({ ok: true });
      const figures = end === undefined ? undefined : endFigures(end);
      expect(figures?.durationMs).toBeGreaterThan(0);
      expect(figures?.commits?.bytesRead).toBeGreaterThan(0);
      expect(figures?.commits?.filesRewritten).toBeGreaterThan(0);
    }
    expect(launched.ends.get(failingRun!)).toMatchObject({
      ok: false,
      error: { kind: 'bad-input', retryable: false },
    });
    const failingEnd = launched.ends.get(failingRun!);
    expect(failingEnd?.ok === false ? failingEnd.error.message : '').toMatch(/no_such_column/);
    expect(followed.ends.has(failingRun!)).toBe(false);

    // One application, its driver run exactly once, the task list in its arguments.
    expect(states.get(name)).toEqual(['SUBMITTED', 'RUNNING', 'SUCCEEDING', 'COMPLETED']);
    const driverRuns = kubelet.runs.filter((r) => r.pod === `${name}-driver`);
    expect(driverRuns).toHaveLength(1);
    expect(driverRuns[0]?.exitCode).toBe(0);
    const args = driverRuns[0]?.command.appArgs ?? [];
    expect(JSON.parse(args[args.indexOf('--tasks-json') + 1] ?? '[]')).toEqual([failing, merge]);
    // No literal credential in the application or its driver pod.
    const app: unknown = await admin.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      ...SPARK_API,
      namespace,
      name,
    });
    const pod = await admin
      .makeApiClient(CoreV1Api)
      .readNamespacedPod({ name: `${name}-driver`, namespace });
    for (const [what, object] of Object.entries({ app, pod }))
      expect(JSON.stringify(object).includes(token), what).toBe(false);

    // The merged table: fewer data files, the same rows; the failing task's table untouched.
    const was = truth('odd-name');
    const now = await tableTruth(was.id);
    expect(now.dataFiles.count).toBeLessThan(was.dataFiles.count);
    expect(now.recordCount).toBe(was.recordCount);
    expect(now.contentChecksum).toEqual(was.contentChecksum);
    expect(await currentSnapshot(failing.table)).toBe(untouched);
  }, 600_000);
});
