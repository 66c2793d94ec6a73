import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { createLogger, createRedisConnection } from '@icepack/runtime';
import { InMemoryMetrics, ServiceProcess } from '@icepack/runtime/testing';
import { startFakeKubeApi, resourceTypeOf } from '@icepack/test/k8s';
import type { FakeKubeApi } from '@icepack/test/k8s';
import { BULLMQ_PREFIX, queueNameForCatalog } from '@icepack/types';
import { Queue, Worker } from 'bullmq';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { RedisStore } from './adapters/redis-store.ts';
import type { GroupView } from './domain/group-record.ts';
import { readBindings } from './testing/binding-reader.ts';
import { startTestProvisioner, TEST_INSTALLATION, TEST_TOKEN } from './testing/test-provisioner.ts';
import type { TestProvisioner } from './testing/test-provisioner.ts';

const infra = inject('infra');

let kube: FakeKubeApi;
let suffix: string;
const cleanups: (() => Promise<unknown>)[] = [];

beforeEach(async () => {
  kube = await startFakeKubeApi();
  suffix = randomUUID().slice(0, 8);
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await kube.stop();
});

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
): Promise<T> {
  for (let i = 0; i < 300; i += 1) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function provisioner(
  options: Partial<Parameters<typeof startTestProvisioner>[0]> = {},
): Promise<TestProvisioner> {
  const p = await startTestProvisioner({ infra, kubeUrl: kube.url, ...options });
  cleanups.push(() => p.stop());
  return p;
}

function exists(plural: string, namespace: string, name: string): boolean {
  try {
    kube.store.get(resourceTypeOf(plural), namespace, name);
    return true;
  } catch {
    return false;
  }
}

describe('provisioner: reconcile', () => {
  it('finishes a group whose provisioner was killed right after the namespace step', async () => {
    const prefix = `icepack-test:${randomUUID()}`;
    const catalog = `crash-${suffix}`;
    const namespace = `icepack-${catalog}`;
    const first = await ServiceProcess.start({
      entry: resolve(import.meta.dirname, 'main.ts'),
      env: {
        ICEPACK_KAFKA_BROKERS: infra.kafkaBrokers.join(','),
        ICEPACK_REDIS_URL: infra.redisUrl,
        ICEPACK_API_TOKEN: TEST_TOKEN,
        ICEPACK_KUBE_API_URL: kube.url,
        ICEPACK_INSTALLATION_ID: TEST_INSTALLATION,
        ICEPACK_PROVISIONER_KEY_PREFIX: prefix,
        ICEPACK_RECONCILE_INTERVAL: '1h',
      },
    });
    cleanups.push(() => first.stop('SIGKILL'));
    await first.waitForReadyz((r) => r.status === 200);
    const call = (method: string, path: string, body: unknown) =>
      fetch(`${first.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect(
      (await call('POST', '/v1/catalogs', { name: catalog, type: 'rest', uri: infra.catalogUri }))
        .status,
    ).toBe(201);

    // The quota request never gets an answer: the process dies while waiting for it.
    const hold = kube.hold((method, path) => method === 'POST' && path.endsWith('/resourcequotas'));
    const pending = call('POST', '/v1/resource-groups', {
      name: catalog,
      catalog,
      cpu: '4',
      memory: '8Gi',
      slots: 1,
    }).catch(() => undefined);
    await until('the quota request', () => hold.held() === 1);
    expect(exists('namespaces', '', namespace)).toBe(true);
    await first.stop('SIGKILL');
    await pending;
    await until('the fake API server to see the caller gone', () => hold.held() === 0);
    hold.release();
    expect(exists('resourcequotas', namespace, 'icepack')).toBe(false);

    const logger = createLogger({ service: 'test', level: 'silent' });
    const redis = createRedisConnection(infra.redisUrl, { role: 'client', logger });
    cleanups.push(() => redis.close());
    const persisted = await new RedisStore(redis.redis, prefix).getGroup(catalog);
    expect(persisted?.phase).toBe('provisioning');
    expect(persisted?.steps.namespace.state).toBe('done');
    expect(persisted?.steps.resourceQuota.state).toBe('pending');

    const reader = await readBindings(infra.kafkaBrokers, new Set([catalog]));
    cleanups.push(() => reader.stop());
    // A new provisioner on the same Redis: its start-up reconcile completes the rest.
    const second = await provisioner({ prefix });
    const group = await second.api<GroupView>('GET', `/v1/resource-groups/${catalog}`);
    expect(group.body.status.phase).toBe('ready');
    expect(group.body.status.steps.every((step) => step.state === 'done')).toBe(true);
    for (const [plural, name] of [
      ['resourcequotas', 'icepack'],
      ['limitranges', 'icepack'],
      ['configmaps', 'icepack-spark'],
      ['serviceaccounts', 'icepack-spark'],
    ] as const) {
      expect(exists(plural, namespace, name)).toBe(true);
    }
    await until('the ready binding', () => reader.events.find((e) => e.binding?.state === 'ready'));
  });

  it('puts back a hand-deleted ResourceQuota and a hand-edited ConfigMap on the next pass of the loop', async () => {
    const catalog = `drift-${suffix}`;
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
    const original = kube.store.get(resourceTypeOf('configmaps'), namespace, 'icepack-spark');

    kube.store.delete(resourceTypeOf('resourcequotas'), namespace, 'icepack');
    kube.store.patch(
      resourceTypeOf('configmaps'),
      namespace,
      'icepack-spark',
      'application/merge-patch+json',
      { data: { 'spark-defaults.conf': 'tampered' } },
    );

    const quota = await until('the quota to come back', () =>
      exists('resourcequotas', namespace, 'icepack')
        ? kube.store.get(resourceTypeOf('resourcequotas'), namespace, 'icepack')
        : undefined,
    );
    expect(quota.spec).toEqual({
      hard: { 'requests.cpu': '4', 'requests.memory': '8Gi', 'limits.memory': '8Gi', pods: '5' },
    });
    await until('the config map to be restored', () => {
      const current = kube.store.get(resourceTypeOf('configmaps'), namespace, 'icepack-spark');
      return JSON.stringify(current.data) === JSON.stringify(original.data) ? true : undefined;
    });
    expect(
      (await p.api<GroupView>('GET', `/v1/resource-groups/${catalog}`)).body.status.phase,
    ).toBe('ready');
  });
});

describe('provisioner: reconcile metrics', () => {
  it('count a group whose Kubernetes steps fail as a failed reconcile, and a healthy one as ok', async () => {
    const guarded = await startFakeKubeApi({ token: 'kube-token-0123' });
    cleanups.push(() => guarded.stop());
    const prefix = `icepack-test:${randomUUID()}`;
    const catalog = `metrics-${suffix}`;
    const healthy = new InMemoryMetrics();
    cleanups.push(() => healthy.shutdown());
    const good = await provisioner({
      kubeUrl: guarded.url,
      kubeToken: 'kube-token-0123',
      prefix,
      meter: healthy.meter,
    });
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
    await provisioner({ kubeUrl: guarded.url, kubeToken: 'expired', prefix, meter: expired.meter });
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
    const catalog = `drain-${suffix}`;
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
    expect(exists('namespaces', '', `icepack-${catalog}`)).toBe(true);

    finish();
    await until(
      'the group to go',
      async () => (await p.api('GET', `/v1/resource-groups/${catalog}`)).status === 404,
    );
    expect(exists('namespaces', '', `icepack-${catalog}`)).toBe(false);
    await until('the tombstone', () => reader.events.find((e) => e.binding === undefined));
    expect(reader.events.map((e) => e.binding?.state ?? 'tombstone')).toEqual([
      'ready',
      'draining',
      'tombstone',
    ]);
  });

  it('cancels the Spark jobs of a drain that times out and deletes the group anyway', async () => {
    const catalog = `stuck-${suffix}`;
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
    const spark = resourceTypeOf('sparkapplications', 'sparkoperator.k8s.io');
    kube.store.create(spark, namespace, { metadata: { name: 'job-1' }, spec: { type: 'Python' } });
    // Deletions in the namespace, in order: a cancelled job goes before the namespace sweep.
    const deletions: string[] = [];
    for (const type of [spark, resourceTypeOf('configmaps')]) {
      const unwatch = kube.store.watch(
        type,
        { namespace, resourceVersion: kube.store.resourceVersion() },
        (event, object) => {
          if (event === 'DELETED') deletions.push(object.metadata.name);
        },
      );
      cleanups.push(() => Promise.resolve(unwatch()));
    }

    await p.api('DELETE', `/v1/resource-groups/${catalog}`);
    await until(
      'the group to go',
      async () => (await p.api('GET', `/v1/resource-groups/${catalog}`)).status === 404,
    );
    // The job was cancelled first, not merely swept away with the namespace.
    expect(deletions).toEqual(['job-1', 'icepack-spark']);
  });
});
