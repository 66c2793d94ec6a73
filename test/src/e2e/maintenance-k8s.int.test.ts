import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
} from '@kubernetes/client-node';
import type { ServiceProcess } from '@icepack/runtime/testing';
import { namespaceForGroup } from '@icepack/types';
import type { TaskEvent } from '@icepack/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureKey } from '../fixtures/fixture-keys.ts';
import { fixtureTruth, generateFixtures } from '../fixtures/generate-fixtures.ts';
import type { TableTruth } from '../fixtures/ground-truth.ts';
import { tableTruth } from '../fixtures/table-truth.ts';
import { infraEnv } from '../infra/env.ts';
import { chartServiceAccess, writeKubeConfig, type ChartAccess } from '../k8s-real/chart-access.ts';
import { adminKubeConfig } from '../k8s-real/control-plane.ts';
import { startKubeletStandin, type KubeletStandin } from '../k8s-real/kubelet-standin.ts';
import { PrivateStack, startService, type Service } from './private-stack.ts';
import { TaskEventLog, until } from './task-event-log.ts';

// The Kubernetes variant of maintenance.int.test.ts: the four services as their own processes
// on a Redis, Kafka and REST catalog of this file alone, but the provisioner in kubernetes mode
// (the group's namespace, quota, LimitRange, ConfigMap and driver account on the real local API
// server, deploy/local/k8s.sh) and the dispatcher running the task through the spark-operator
// runner: a SparkApplication the real Spark operator submits, its driver pod run with the local
// Spark by the kubelet stand-in. Both act with a ServiceAccount token bound to exactly the
// ClusterRole `helm template` renders for them. One table, one task (a merge): one Spark run.

const suffix = randomBytes(4).toString('hex');
const catalog = `e2ek8s${suffix}`;
/** The group's namespace, made by the provisioner: unique per run like the catalog. */
const namespace = namespaceForGroup(catalog);
const installation = `e2e-k8s-${suffix}`;
const apiToken = randomBytes(24).toString('hex');
const key = FixtureKey.unpartitionedSmallFiles;
const MINUTE = 60_000;
const SPARK_APPLICATIONS = {
  group: 'sparkoperator.k8s.io',
  version: 'v1beta2',
  plural: 'sparkapplications',
} as const;

let stack: PrivateStack;
let log: TaskEventLog;
let admin: KubeConfig;
let kubelet: KubeletStandin;
let before: TableTruth;
const access = new Map<'provisioner' | 'dispatcher', ChartAccess>();
const running = new Map<Service, ServiceProcess>();

function serviceEnv(service: Service): Record<string, string> {
  const common = {
    ...stack.serviceEnv(service, apiToken),
    // The private catalog's tables are on this machine's disk (the driver runs here too).
    ICEPACK_LOCAL_CATALOGS: catalog,
  };
  switch (service) {
    case 'provisioner':
      return {
        ...common,
        ICEPACK_PROVISIONER_MODE: 'kubernetes',
        ICEPACK_INSTALLATION_ID: installation,
        KUBECONFIG: join(stack.runDir, 'provisioner.kubeconfig'),
        ICEPACK_BOOTSTRAP_FILE: stack.bootstrapFile,
      };
    case 'metadata-scanner':
      return { ...common, ICEPACK_SCANNER_DISCOVERY_INTERVAL: '1h' };
    case 'planner':
      return {
        ...common,
        // More than 2 small files call for a merge, at once; nothing else is due on a
        // table seconds old.
        ICEPACK_PLANNER_CATALOG_POLICY: JSON.stringify({
          [catalog]: { 'icepack.small-file-threshold': '2', 'icepack.merge.min-interval': '0' },
        }),
      };
    case 'dispatcher':
      return {
        ...common,
        KUBECONFIG: join(stack.runDir, 'dispatcher.kubeconfig'),
        ICEPACK_DISPATCHER_STATE_DIR: join(stack.runDir, 'dispatcher'),
      };
  }
}

const start = (service: Service) => startService(service, serviceEnv(service), running);

function describeSystem(): string {
  return [
    `task events:\n  ${log.lines.join('\n  ')}`,
    `driver runs: ${JSON.stringify(kubelet.runs.map(({ pod, exitCode, logFile }) => ({ pod, exitCode, logFile })))}`,
    ...[...running].map(([name, p]) => `--- ${name} ---\n${p.describe()}`),
  ].join('\n');
}

const codeOf = (error: unknown): number | undefined =>
  error instanceof ApiException ? error.code : undefined;

/** Deletes a namespace; true once it is gone or going. */
async function deleteNamespace(name: string): Promise<void> {
  try {
    await admin.makeApiClient(CoreV1Api).deleteNamespace({ name });
  } catch (error) {
    if (codeOf(error) !== 404) throw error;
  }
}

beforeAll(async () => {
  const infra = infraEnv();
  admin = adminKubeConfig(infra.kube);
  stack = await PrivateStack.start();
  const ground = await generateFixtures({
    catalogUri: stack.catalogUri,
    catalogName: catalog,
    only: [key],
    out: join(stack.runDir, 'ground-truth.json'),
  });
  before = fixtureTruth(ground, key);

  // The provisioner's rights as the chart renders them (cluster-wide: it makes namespaces).
  const provisioner = await chartServiceAccess(admin, 'provisioner', { suffix });
  access.set('provisioner', provisioner);
  await writeKubeConfig(provisioner.kubeConfig, serviceEnv('provisioner').KUBECONFIG!);
  await stack.writeBootstrap(catalog, {
    cpu: '4',
    memory: '8Gi',
    slots: 1,
    spark: {
      driverCores: 1,
      driverMemory: '1g',
      executorCores: 1,
      executorMemory: '1g',
      maxExecutors: 1,
    },
  });
  await start('provisioner');
  log = await TaskEventLog.start(stack.kafkaBrokers);
  // The dispatcher's rights in the group's namespace only (the chart's
  // `rbac.dispatcher.namespaces` form), so the namespace must exist first.
  await until(
    async () => {
      try {
        await admin.makeApiClient(CoreV1Api).readNamespace({ name: namespace });
        return true;
      } catch (error) {
        if (codeOf(error) === 404) return undefined;
        throw error;
      }
    },
    `the provisioner to create namespace ${namespace}`,
    2 * MINUTE,
    describeSystem,
  );
  const dispatcher = await chartServiceAccess(admin, 'dispatcher', { suffix, namespace });
  access.set('dispatcher', dispatcher);
  await writeKubeConfig(dispatcher.kubeConfig, serviceEnv('dispatcher').KUBECONFIG!);
  kubelet = await startKubeletStandin({ namespaces: [namespace], sparkJars: infra.sparkJars });
  await Promise.all([start('metadata-scanner'), start('planner'), start('dispatcher')]);
}, 15 * MINUTE);

afterAll(async () => {
  for (const process of running.values()) await process.stop('SIGTERM');
  await kubelet?.stop();
  await log?.stop();
  for (const a of access.values()) await a.cleanup();
  // The group's namespace goes with everything in it (the SparkApplication, the driver pod);
  // the accounts' namespaces went with cleanup().
  if (admin !== undefined) await deleteNamespace(namespace);
  if (stack !== undefined) {
    await stack.stop();
    await rm(stack.runDir, { recursive: true, force: true });
  }
}, 5 * MINUTE);

describe('Icepack end to end on Kubernetes: the real API server and Spark operator, the chart’s RBAC', () => {
  it(
    'merges a table through a SparkApplication the real operator completes, keeping every row',
    async () => {
      // The provisioner made the namespace as its own, Pod Security enforced.
      const ns = await admin.makeApiClient(CoreV1Api).readNamespace({ name: namespace });
      expect(ns.metadata?.labels?.['app.kubernetes.io/managed-by']).toBe('icepack');
      expect(ns.metadata?.annotations?.['icepack.io/installation']).toBe(installation);
      expect(ns.metadata?.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');

      const done = await until(
        () =>
          log
            .forTable(before.id.name)
            .find((e) => e.taskType === 'merge' && ['succeeded', 'failed'].includes(e.status)),
        `the merge of ${before.id.name} to end`,
        12 * MINUTE,
        describeSystem,
      );
      expect(done.status, describeSystem()).toBe('succeeded');
      // The event carries the figures the dispatcher read before and after the run.
      expect(done.before!.dataFiles).toBe(before.dataFiles.count);
      expect(done.after!.dataFiles).toBeLessThan(done.before!.dataFiles);
      // One task's run: a batch's tasks share its run id (docs/messages.md).
      const runEvents = (e: TaskEvent) => e.runId === done.runId && e.taskId === done.taskId;
      expect(log.events.filter(runEvents).map((e) => e.status)).toEqual(['started', 'succeeded']);
      expect(log.events.filter((e) => e.status === 'failed')).toEqual([]);
      expect(log.invalid).toEqual([]);
      expect(log.lifecycleViolations()).toEqual([]);

      // The run was a SparkApplication in the group's namespace that the real operator took to
      // COMPLETED, its driver pod run once by the kubelet stand-in.
      const app = (await admin.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
        ...SPARK_APPLICATIONS,
        namespace,
        name: done.runId!,
      })) as { status?: { applicationState?: { state?: string } } };
      expect(app.status?.applicationState?.state).toBe('COMPLETED');
      expect(kubelet.runs.map(({ pod, exitCode }) => ({ pod, exitCode }))).toEqual([
        { pod: `${done.runId!}-driver`, exitCode: 0 },
      ]);

      // The real table, read with Spark: fewer data files, the same rows.
      const now = await tableTruth(before.id, { catalogUri: stack.catalogUri });
      expect(now.recordCount).toBe(before.recordCount);
      expect(now.contentChecksum).toEqual(before.contentChecksum);
      expect(now.dataFiles.count).toBeLessThan(before.dataFiles.count);
      expect(now.currentSnapshotId).not.toBe(before.currentSnapshotId);
    },
    20 * MINUTE,
  );
});
