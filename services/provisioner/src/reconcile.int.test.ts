import { kubeConfigWithToken } from '@icepack/test';
import { InMemoryMetrics } from '@icepack/runtime/testing';
import { BULLMQ_PREFIX, queueNameForCatalog } from '@icepack/types';
import { CustomObjectsApi, Watch } from '@kubernetes/client-node';
import { Queue, Worker } from 'bullmq';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { GroupView } from './domain/group-record.ts';
import { readBindings } from './testing/binding-reader.ts';
import { realClusterSuite, statusOf } from './testing/real-cluster.ts';
import { startTestProvisioner } from './testing/test-provisioner.ts';
import type { TestProvisioner } from './testing/test-provisioner.ts';
import { until } from './testing/until.ts';

// The real local control plane, with the chart's RBAC (see lifecycle.int.test.ts). The crash
// between steps needs a held request: crash.int.test.ts, on the fake API server.
const infra = inject('infra');
const suite = realClusterSuite(infra.kube);
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function provisioner(
  options: Partial<Parameters<typeof startTestProvisioner>[0]> = {},
): Promise<TestProvisioner> {
  const p = await startTestProvisioner({
    infra,
    kubeConfig: suite.access.kubeConfig,
    installation: suite.installation,
    ...options,
  });
  cleanups.push(() => p.stop());
  return p;
}

async function exists(read: () => Promise<unknown>): Promise<boolean> {
  return (await statusOf(read())) === 200;
}

describe('provisioner: reconcile', () => {
  it('puts back a hand-deleted ResourceQuota and a hand-edited ConfigMap on the next pass of the loop', async () => {
    const catalog = `drift-${suite.suffix}`;
    const namespace = `icepack-${catalog}`;
    const p = await provisioner({ reconcileIntervalMs: 200 });
    await p.api('POST', '/v1/catalogs', { name: catalog, type: 'rest', uri: infra.catalogUri });
    expect(
      (
        await p.api('POST', '/v1/resource-groups', {
          name: catalog,
          catalog,
          cpu: '4',
          memory: '8Gi',
          slots: 1,
        })
      ).status,
    ).toBe(201);
    const { core } = suite;
    const original = await core.readNamespacedConfigMap({ name: 'icepack-spark', namespace });

    await core.deleteNamespacedResourceQuota({ name: 'icepack', namespace });
    await core.replaceNamespacedConfigMap({
      name: 'icepack-spark',
      namespace,
      body: { ...original, data: { 'spark-defaults.conf': 'tampered' } },
    });

    const quota = await until('the quota to come back', async () =>
      (await exists(() => core.readNamespacedResourceQuota({ name: 'icepack', namespace })))
        ? core.readNamespacedResourceQuota({ name: 'icepack', namespace })
        : undefined,
    );
    expect(quota.spec?.hard).toEqual({
      'requests.cpu': '4',
      'requests.memory': '8Gi',
      'limits.memory': '8Gi',
      pods: '10', // (slots 1 + smallSlots 1) × (driver + 4 executors)
    });
    await until('the config map to be restored', async () => {
      const current = await core.readNamespacedConfigMap({ name: 'icepack-spark', namespace });
      return JSON.stringify(current.data) === JSON.stringify(original.data) ? true : undefined;
    });
    expect(
      (await p.api<GroupView>('GET', `/v1/resource-groups/${catalog}`)).body.status.phase,
    ).toBe('ready');
  });
});

describe('provisioner: reconcile against what the API server stores', () => {
  it('writes nothing on a pass over a group nobody touched: every object keeps its resourceVersion', async () => {
    const catalog = `still-${suite.suffix}`;
    const namespace = `icepack-${catalog}`;
    const p = await provisioner();
    await p.api('POST', '/v1/catalogs', { name: catalog, type: 'rest', uri: infra.catalogUri });
    const body = { name: catalog, catalog, cpu: '4', memory: '8Gi', slots: 1 };
    expect((await p.api('POST', '/v1/resource-groups', body)).status).toBe(201);
    const { core, rbac } = suite;
    const name = 'icepack';
    // The quota controller writes status.used once; after that the quota is still too.
    await until(
      'the quota controller',
      async () => (await core.readNamespacedResourceQuota({ name, namespace })).status?.used,
    );
    const versions = async () => ({
      namespace: (await core.readNamespace({ name: namespace })).metadata?.resourceVersion,
      quota: (await core.readNamespacedResourceQuota({ name, namespace })).metadata
        ?.resourceVersion,
      limitRange: (await core.readNamespacedLimitRange({ name, namespace })).metadata
        ?.resourceVersion,
      configMap: (await core.readNamespacedConfigMap({ name: 'icepack-spark', namespace })).metadata
        ?.resourceVersion,
      role: (await rbac.readNamespacedRole({ name: 'icepack-spark-driver', namespace })).metadata
        ?.resourceVersion,
      roleBinding: (
        await rbac.readNamespacedRoleBinding({ name: 'icepack-spark-driver', namespace })
      ).metadata?.resourceVersion,
    });
    const before = await versions();
    await p.provisioner.reconciler.runOnce();
    await p.provisioner.reconciler.runOnce();
    expect(await versions()).toEqual(before);
  });
});

describe('provisioner: reconcile metrics', () => {
  it('count a group whose Kubernetes steps fail as a failed reconcile, and a healthy one as ok', async () => {
    const prefix = `icepack-test:${suite.suffix}`;
    const catalog = `metrics-${suite.suffix}`;
    const healthy = new InMemoryMetrics();
    cleanups.push(() => healthy.shutdown());
    const good = await provisioner({ prefix, meter: healthy.meter });
    await good.api('POST', '/v1/catalogs', { name: catalog, type: 'rest', uri: infra.catalogUri });
    const body = { name: catalog, catalog, cpu: '4', memory: '8Gi', slots: 1 };
    expect((await good.api('POST', '/v1/resource-groups', body)).status).toBe(201);
    await good.provisioner.reconciler.runOnce();
    const groups = 'icepack.provisioner.group_reconciles';
    expect(await healthy.value(groups, { group: catalog, outcome: 'ok' })).toBe(1);
    expect(await healthy.value(groups, { outcome: 'failed' })).toBe(0);

    // Another provisioner on the same state whose Kubernetes credentials are no longer valid:
    // its start-up pass fails every step of the group, and says so.
    const expired = new InMemoryMetrics();
    cleanups.push(() => expired.shutdown());
    await provisioner({
      kubeConfig: kubeConfigWithToken(suite.admin, 'expired'),
      prefix,
      meter: expired.meter,
    });
    expect(await expired.value(groups, { group: catalog, outcome: 'failed' })).toBe(1);
    // The pass itself went through: the failure is the group's, recorded on it.
    expect(await expired.value('icepack.provisioner.reconcile_passes', { outcome: 'ok' })).toBe(1);
  });
});

describe('provisioner: drain on delete', () => {
  async function runningTask(catalog: string) {
    const connection = { url: infra.redisUrl, maxRetriesPerRequest: null };
    const queue = new Queue(queueNameForCatalog(catalog), { connection, prefix: BULLMQ_PREFIX });
    let finish: () => void = () => undefined;
    const finished = new Promise<void>((r) => (finish = r));
    const worker = new Worker(queueNameForCatalog(catalog), () => finished, {
      connection,
      prefix: BULLMQ_PREFIX,
      autorun: true,
    });
    cleanups.push(async () => {
      finish();
      await worker.close();
      await queue.obliterate({ force: true });
      await queue.close();
    });
    await queue.add('task', {}, { priority: 1 });
    await until('the task to run', async () => (await queue.getActiveCount()) === 1);
    return finish;
  }

  it('waits for the running task, then deletes the namespace and tombstones the binding', async () => {
    const catalog = `drain-${suite.suffix}`;
    const p = await provisioner();
    const reader = await readBindings(infra.kafkaBrokers, new Set([catalog]));
    cleanups.push(() => reader.stop());
    await p.api('POST', '/v1/catalogs', { name: catalog, type: 'rest', uri: infra.catalogUri });
    await p.api('POST', '/v1/resource-groups', {
      name: catalog,
      catalog,
      cpu: '4',
      memory: '8Gi',
      slots: 1,
    });
    const finish = await runningTask(catalog);

    expect(
      (await p.api<GroupView>('DELETE', `/v1/resource-groups/${catalog}`)).body.status.phase,
    ).toBe('draining');
    await until('the draining binding', () =>
      reader.events.find((e) => e.binding?.state === 'draining'),
    );
    const waiting = await until('the drain to see the task', async () => {
      const view = await p.api<GroupView>('GET', `/v1/resource-groups/${catalog}`);
      return view.body.status.runningTasks === 1 ? view.body : undefined;
    });
    expect(waiting.status.phase).toBe('draining');
    const name = `icepack-${catalog}`;
    expect(await exists(() => suite.core.readNamespace({ name }))).toBe(true);

    finish();
    await until(
      'the group to go',
      async () => (await p.api('GET', `/v1/resource-groups/${catalog}`)).status === 404,
    );
    // Gone for real: the namespace controller emptied it before the group went.
    expect(await suite.gone(name)).toBe(true);
    await until('the tombstone', () => reader.events.find((e) => e.binding === undefined));
    expect(reader.events.map((e) => e.binding?.state ?? 'tombstone')).toEqual([
      'ready',
      'draining',
      'tombstone',
    ]);
  });

  it('cancels the Spark jobs of a drain that times out and deletes the group anyway', async () => {
    const catalog = `stuck-${suite.suffix}`;
    const namespace = `icepack-${catalog}`;
    const p = await provisioner({ drainTimeoutMs: 300 });
    await p.api('POST', '/v1/catalogs', { name: catalog, type: 'rest', uri: infra.catalogUri });
    await p.api('POST', '/v1/resource-groups', {
      name: catalog,
      catalog,
      cpu: '4',
      memory: '8Gi',
      slots: 1,
    });
    await runningTask(catalog);
    const spark = {
      group: 'sparkoperator.k8s.io',
      version: 'v1beta2',
      plural: 'sparkapplications',
    };
    await suite.admin.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      ...spark,
      namespace,
      body: {
        apiVersion: 'sparkoperator.k8s.io/v1beta2',
        kind: 'SparkApplication',
        metadata: { name: 'job-1' },
        spec: {
          type: 'Python',
          mode: 'cluster',
          image: 'apache/spark:4.0.1-python3',
          mainApplicationFile: 'local:///opt/icepack/jobs/spark/icepack_job.py',
          sparkVersion: '4.0.1',
          driver: { serviceAccount: 'icepack-spark' },
          executor: { instances: 1 },
        },
      },
    });
    // Deletions in the namespace, in order: a cancelled job goes before the namespace sweep.
    const deletions: string[] = [];
    const watch = new Watch(suite.admin);
    for (const path of [
      `/apis/${spark.group}/${spark.version}/namespaces/${namespace}/${spark.plural}`,
      `/api/v1/namespaces/${namespace}/configmaps`,
    ]) {
      const request = await watch.watch(
        path,
        {},
        (phase, object: { metadata: { name: string } }) => {
          if (phase === 'DELETED') deletions.push(object.metadata.name);
        },
        () => undefined,
      );
      cleanups.push(() => Promise.resolve(request.abort()));
    }

    await p.api('DELETE', `/v1/resource-groups/${catalog}`);
    await until(
      'the group to go',
      async () => (await p.api('GET', `/v1/resource-groups/${catalog}`)).status === 404,
    );
    await until('the namespace sweep', () => deletions.includes('icepack-spark'));
    // The job was cancelled first, not merely swept away with the namespace.
    expect(deletions[0]).toBe('job-1');
  });
});
