import { randomBytes } from 'node:crypto';
import { CoreV1Api, RbacAuthorizationV1Api, Watch, type KubeConfig } from '@kubernetes/client-node';
import {
  adminKubeConfig,
  serviceAccountKubeConfig,
  startKubeletStandin,
  tableTruth,
  type KubeletStandin,
  type ServiceAccountAccess,
} from '@icepack/test';
import type { Task } from '@icepack/types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sizeJob } from '../domain/sizing.ts';
import { dispatchTables, type DispatchTruth } from '../adapters/testing/dispatch-tables.ts';
import { mergeTask, sortTask } from '../adapters/testing/sample-tasks.ts';
import { testBinding } from '../adapters/testing/test-binding.ts';
import { SPARK_API } from './spark-application.ts';
import { SparkOperatorRunner } from './spark-operator-runner.ts';
import type { RunRequest } from './spark-runner.ts';

// The dispatcher's own spark-operator runner against the real local control plane
// (deploy/local/k8s.sh): the real kube-apiserver, the real Kubeflow Spark operator with the fake
// spark-submit that creates the driver pod, and the kubelet stand-in that runs that pod's job with
// the local Spark against the local REST catalog.
const infra = inject('infra');
const suffix = randomBytes(3).toString('hex');
const catalogName = `opreal${suffix}`;
const prefix = `opreal_${suffix}`;
const binding = testBinding(catalogName, { runner: 'spark-operator' });
const { namespace } = binding;

let admin: KubeConfig;
let dispatcher: ServiceAccountAccess;
let kubelet: KubeletStandin;
let before: Record<string, DispatchTruth>;
/** Every `status.applicationState.state` each application went through, in order. */
const states = new Map<string, string[]>();
let stopWatch: (() => void) | undefined;

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
    catalog: { name: catalogName, uri: infra.catalogUri },
    timeoutMs: 10 * 60_000,
  };
}

function truth(key: string): DispatchTruth {
  const t = before[key];
  if (t === undefined) throw new Error(`no truth for ${key}`);
  return t;
}

beforeAll(async () => {
  admin = adminKubeConfig(infra.kube);
  const core = admin.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  // The driver's account, as the provisioner creates it in each namespace.
  await core.createNamespacedServiceAccount({
    namespace,
    body: { metadata: { name: 'icepack-spark' } },
  });
  // The runner acts with a token that may only handle SparkApplications in this namespace.
  await admin.makeApiClient(RbacAuthorizationV1Api).createNamespacedRole({
    namespace,
    body: {
      metadata: { name: 'spark-applications' },
      rules: [
        {
          apiGroups: [SPARK_API.group],
          resources: [SPARK_API.plural],
          verbs: ['get', 'list', 'watch', 'create', 'delete'],
        },
      ],
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
  await dispatcher?.cleanup();
  await admin
    ?.makeApiClient(CoreV1Api)
    .deleteNamespace({ name: namespace })
    .catch(() => undefined);
});

describe('the spark-operator runner on the real Spark operator and API server', () => {
  it('runs a merge as a SparkApplication that goes SUBMITTED → RUNNING → COMPLETED and rewrites the table', async () => {
    const task = mergeTask(truth('unpartitioned-small-files'), 5);
    const runner = new SparkOperatorRunner({ kubeConfig: dispatcher.kubeConfig, pollMs: 500 });
    const run = request(task);
    const outcome = await runner.run(run);
    expect(outcome).toEqual({ ok: true, reattached: false });

    const name = runner.runName(run);
    expect(states.get(name)).toEqual(['SUBMITTED', 'RUNNING', 'SUCCEEDING', 'COMPLETED']);
    // The driver pod ran exactly once, with the job file and the application's arguments.
    const driverRuns = kubelet.runs.filter((r) => r.pod === `${name}-driver`);
    expect(driverRuns).toHaveLength(1);
    expect(driverRuns[0]?.exitCode).toBe(0);
    expect(driverRuns[0]?.command.mainFile).toBe('local:///opt/icepack/jobs/spark/icepack_job.py');
    expect(driverRuns[0]?.command.appArgs).toEqual(
      expect.arrayContaining([
        '--catalog-uri',
        infra.catalogUri,
        '--task-json',
        JSON.stringify(task),
      ]),
    );
    expect(driverRuns[0]?.command.conf['spark.sql.shuffle.partitions']).toBeDefined();

    // The real table: fewer data files, the same rows.
    const was = truth('unpartitioned-small-files');
    const now = await tableTruth(was.id);
    expect(now.dataFiles.count).toBeLessThan(was.dataFiles.count);
    expect(now.recordCount).toBe(was.recordCount);
    expect(now.contentChecksum).toEqual(was.contentChecksum);
    expect(now.currentSnapshotId).not.toBe(was.currentSnapshotId);
  }, 300_000);

  it("fails a failing job with the driver's exit code, as the operator reports it, in the task's error", async () => {
    // A z-order on a column the table does not have: the job exits non-zero.
    const task = sortTask(truth('odd-name'), 'zorder', [{ name: 'no_such_column' }]);
    const runner = new SparkOperatorRunner({ kubeConfig: dispatcher.kubeConfig, pollMs: 500 });
    const run = request(task);
    const outcome = await runner.run(run);

    const name = runner.runName(run);
    const driverRun = kubelet.runs.find((r) => r.pod === `${name}-driver`);
    const exitCode = driverRun?.exitCode;
    // The job's exit code for bad input (a column the table lacks), as the local runner sees it.
    expect(exitCode).toBe(2);
    expect(states.get(name)).toEqual(['SUBMITTED', 'RUNNING', 'FAILING', 'FAILED']);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.error.message).toBe(
      `driver container failed with ExitCode: ${String(exitCode)}, Reason: Error`,
    );
    expect(outcome.error.kind).toBe('bad-input');
    // The table is untouched.
    const was = truth('odd-name');
    const now = await tableTruth(was.id);
    expect(now.currentSnapshotId).toBe(was.currentSnapshotId);
    expect(now.contentChecksum).toEqual(was.contentChecksum);
  }, 300_000);
});
