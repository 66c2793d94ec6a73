import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeKubeApi } from './fake-kube-api.ts';
import type { FakeKubeApi } from './fake-kube-api.ts';
import { kubeConfigFor } from './kube-config.ts';
import { rejection } from './k8s-test-helpers.ts';

const TOKEN = 'fake-api-token';
const spark = { group: 'sparkoperator.k8s.io', version: 'v1beta2', plural: 'sparkapplications' };
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

let api: FakeKubeApi;
let core: CoreV1Api;
let rbac: RbacAuthorizationV1Api;
let custom: CustomObjectsApi;

beforeEach(async () => {
  api = await startFakeKubeApi({
    token: TOKEN,
    nodes: [
      { name: 'n1', cpu: '8', memory: '32Gi' },
      { name: 'n2', cpu: '4', memory: '16Gi' },
    ],
  });
  const kc = kubeConfigFor(api.url, TOKEN);
  core = kc.makeApiClient(CoreV1Api);
  rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
  await core.createNamespace({ body: { metadata: { name: 'team' } } });
});

afterEach(async () => {
  await api.stop();
});

function sparkApp(name: string, spec: Record<string, unknown> = {}) {
  return {
    apiVersion: 'sparkoperator.k8s.io/v1beta2',
    kind: 'SparkApplication',
    metadata: { name, labels: { app: 'icepack' } },
    spec: {
      type: 'Python',
      driver: { cores: 1, memory: '1g' },
      executor: { cores: 2, memory: '2g', instances: 2 },
      ...spec,
    },
  };
}

describe('fake API server: core objects', () => {
  it('creates a namespace with server-owned metadata and refuses a second one with AlreadyExists', async () => {
    const ns = await core.readNamespace({ name: 'team' });
    expect(ns.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(ns.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(ns.metadata?.labels).toEqual({ 'kubernetes.io/metadata.name': 'team' });
    expect(ns.status?.phase).toBe('Active');
    const again = await rejection(core.createNamespace({ body: { metadata: { name: 'team' } } }));
    expect(again.code).toBe(409);
    expect(again.status).toMatchObject({
      kind: 'Status',
      reason: 'AlreadyExists',
      message: 'namespaces "team" already exists',
      code: 409,
    });
  });

  it('answers 404 NotFound for a missing object and for a create in a missing namespace', async () => {
    const missing = await rejection(
      core.readNamespacedConfigMap({ name: 'nope', namespace: 'team' }),
    );
    expect(missing).toMatchObject({
      code: 404,
      status: { reason: 'NotFound', details: { name: 'nope', kind: 'configmaps' } },
    });
    const noNamespace = await rejection(
      core.createNamespacedConfigMap({ namespace: 'ghost', body: { metadata: { name: 'c' } } }),
    );
    expect(noNamespace).toMatchObject({
      code: 404,
      status: { message: 'namespaces "ghost" not found' },
    });
  });

  it('rejects names that are not DNS-1123 with 422 Invalid naming metadata.name', async () => {
    const bad = await rejection(core.createNamespace({ body: { metadata: { name: 'Bad_Name' } } }));
    expect(bad.code).toBe(422);
    expect(bad.status).toMatchObject({
      reason: 'Invalid',
      details: { causes: [{ field: 'metadata.name' }] },
    });
    const tooLong = await rejection(
      core.createNamespace({ body: { metadata: { name: 'a'.repeat(64) } } }),
    );
    expect(tooLong.code).toBe(422);
  });

  it('lists with equality label selectors and reports the list resourceVersion', async () => {
    await core.createNamespacedConfigMap({
      namespace: 'team',
      body: { metadata: { name: 'a', labels: { tier: 'x' } } },
    });
    await core.createNamespacedConfigMap({
      namespace: 'team',
      body: { metadata: { name: 'b', labels: { tier: 'y' } } },
    });
    const list = await core.listNamespacedConfigMap({ namespace: 'team', labelSelector: 'tier=x' });
    expect(list.items.map((item) => item.metadata?.name)).toEqual(['a']);
    const notY = await core.listNamespacedConfigMap({
      namespace: 'team',
      labelSelector: 'tier!=y',
    });
    expect(notY.items.map((item) => item.metadata?.name)).toEqual(['a']);
    expect(Number(list.metadata?.resourceVersion)).toBeGreaterThanOrEqual(
      Number(
        (await core.readNamespacedConfigMap({ name: 'b', namespace: 'team' })).metadata
          ?.resourceVersion,
      ),
    );
  });

  it('replaces with optimistic concurrency: a stale resourceVersion gets 409 Conflict', async () => {
    const created = await core.createNamespacedConfigMap({
      namespace: 'team',
      body: { metadata: { name: 'c' }, data: { k: '1' } },
    });
    const updated = await core.replaceNamespacedConfigMap({
      name: 'c',
      namespace: 'team',
      body: { ...created, data: { k: '2' } },
    });
    expect(Number(updated.metadata?.resourceVersion)).toBeGreaterThan(
      Number(created.metadata?.resourceVersion),
    );
    expect(updated.metadata?.uid).toBe(created.metadata?.uid);
    const stale = await rejection(
      core.replaceNamespacedConfigMap({
        name: 'c',
        namespace: 'team',
        body: { ...created, data: { k: '3' } },
      }),
    );
    expect(stale.code).toBe(409);
    expect(stale.status).toMatchObject({ reason: 'Conflict' });
    expect((await core.readNamespacedConfigMap({ name: 'c', namespace: 'team' })).data).toEqual({
      k: '2',
    });
  });

  it('patches with JSON patch (the client default), merge patch and strategic merge patch', async () => {
    await core.createNamespacedConfigMap({
      namespace: 'team',
      body: { metadata: { name: 'c' }, data: { a: '1', b: '2' } },
    });
    const json = await core.patchNamespacedConfigMap({
      name: 'c',
      namespace: 'team',
      body: [
        { op: 'replace', path: '/data/a', value: 'x' },
        { op: 'remove', path: '/data/b' },
      ],
    });
    expect(json.data).toEqual({ a: 'x' });
    const merged = await core.patchNamespacedConfigMap(
      { name: 'c', namespace: 'team', body: { data: { b: 'y', a: null } } },
      merge,
    );
    expect(merged.data).toEqual({ b: 'y' });
    const strategic = await core.patchNamespacedConfigMap(
      { name: 'c', namespace: 'team', body: { metadata: { labels: { l: 'v' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    expect(strategic.metadata?.labels).toEqual({ l: 'v' });
    expect(strategic.data).toEqual({ b: 'y' });
  });

  it('deletes a namespace together with everything in it', async () => {
    await core.createNamespacedConfigMap({ namespace: 'team', body: { metadata: { name: 'c' } } });
    await core.createNamespacedResourceQuota({
      namespace: 'team',
      body: { metadata: { name: 'q' }, spec: { hard: { 'requests.cpu': '4' } } },
    });
    await rbac.createNamespacedRole({
      namespace: 'team',
      body: { metadata: { name: 'r' }, rules: [] },
    });
    await core.deleteNamespace({ name: 'team' });
    expect((await rejection(core.readNamespace({ name: 'team' }))).code).toBe(404);
    expect((await core.listConfigMapForAllNamespaces()).items).toEqual([]);
    expect((await core.listResourceQuotaForAllNamespaces()).items).toEqual([]);
    expect((await rbac.listRoleForAllNamespaces()).items).toEqual([]);
  });

  it('serves the seeded nodes with their allocatable capacity', async () => {
    const nodes = await core.listNode();
    expect(nodes.items.map((node) => [node.metadata?.name, node.status?.allocatable])).toEqual([
      ['n1', { cpu: '8', memory: '32Gi', pods: '110' }],
      ['n2', { cpu: '4', memory: '16Gi', pods: '110' }],
    ]);
  });

  it('stores service accounts, limit ranges, roles and role bindings, and keeps roleRef immutable', async () => {
    await core.createNamespacedServiceAccount({
      namespace: 'team',
      body: { metadata: { name: 'spark' } },
    });
    await core.createNamespacedLimitRange({
      namespace: 'team',
      body: {
        metadata: { name: 'l' },
        spec: { limits: [{ type: 'Container', _default: { cpu: '1' } }] },
      },
    });
    await rbac.createNamespacedRole({
      namespace: 'team',
      body: {
        metadata: { name: 'driver' },
        rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['create', 'get'] }],
      },
    });
    const binding = await rbac.createNamespacedRoleBinding({
      namespace: 'team',
      body: {
        metadata: { name: 'driver' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'driver' },
        subjects: [{ kind: 'ServiceAccount', name: 'spark', namespace: 'team' }],
      },
    });
    expect(
      (await core.readNamespacedServiceAccount({ name: 'spark', namespace: 'team' })).metadata
        ?.name,
    ).toBe('spark');
    expect(
      (await core.readNamespacedLimitRange({ name: 'l', namespace: 'team' })).spec?.limits[0]
        ?._default,
    ).toEqual({ cpu: '1' });
    expect(
      (await rbac.readNamespacedRole({ name: 'driver', namespace: 'team' })).rules?.[0]?.resources,
    ).toEqual(['pods']);
    const changed = await rejection(
      rbac.replaceNamespacedRoleBinding({
        name: 'driver',
        namespace: 'team',
        body: { ...binding, roleRef: { ...binding.roleRef, name: 'other' } },
      }),
    );
    expect(changed.code).toBe(422);
  });

  it('rejects a request without the bearer token with 401', async () => {
    const anonymous = kubeConfigFor(api.url).makeApiClient(CoreV1Api);
    const wrong = kubeConfigFor(api.url, 'wrong').makeApiClient(CoreV1Api);
    for (const client of [anonymous, wrong]) {
      const error = await client.listNamespace().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiException);
      expect((error as ApiException<unknown>).code).toBe(401);
    }
  });
});

describe('fake API server: SparkApplications', () => {
  it('creates, lists by label and gets, 409 on a duplicate and 404 after delete', async () => {
    const created = (await custom.createNamespacedCustomObject({
      ...spark,
      namespace: 'team',
      body: sparkApp('job-1'),
    })) as { metadata: { uid: string; generation: number } };
    expect(created.metadata.generation).toBe(1);
    const dup = await rejection(
      custom.createNamespacedCustomObject({ ...spark, namespace: 'team', body: sparkApp('job-1') }),
    );
    expect(dup).toMatchObject({
      code: 409,
      status: {
        reason: 'AlreadyExists',
        details: { group: 'sparkoperator.k8s.io', kind: 'sparkapplications' },
      },
    });
    const list = (await custom.listNamespacedCustomObject({
      ...spark,
      namespace: 'team',
      labelSelector: 'app=icepack',
    })) as { items: unknown[]; metadata: { resourceVersion: string } };
    expect(list.items).toHaveLength(1);
    await custom.deleteNamespacedCustomObject({ ...spark, namespace: 'team', name: 'job-1' });
    const gone = await rejection(
      custom.getNamespacedCustomObject({ ...spark, namespace: 'team', name: 'job-1' }),
    );
    expect(gone).toMatchObject({
      code: 404,
      status: { message: 'sparkapplications.sparkoperator.k8s.io "job-1" not found' },
    });
  });

  it('keeps status behind the /status subresource and bumps generation only on spec changes', async () => {
    await custom.createNamespacedCustomObject({
      ...spark,
      namespace: 'team',
      body: { ...sparkApp('job'), status: { applicationState: { state: 'COMPLETED' } } },
    });
    const stored = (await custom.getNamespacedCustomObject({
      ...spark,
      namespace: 'team',
      name: 'job',
    })) as Record<string, unknown> & { metadata: { resourceVersion: string } };
    expect(stored.status).toBeUndefined();
    const running = (await custom.replaceNamespacedCustomObjectStatus({
      ...spark,
      namespace: 'team',
      name: 'job',
      body: {
        ...stored,
        spec: { type: 'Scala' },
        status: { applicationState: { state: 'RUNNING' } },
      },
    })) as Record<string, unknown> & { metadata: { generation: number } };
    expect(running.status).toEqual({ applicationState: { state: 'RUNNING' } });
    expect(running.spec).toEqual(stored.spec);
    expect(running.metadata.generation).toBe(1);
    const patched = (await custom.patchNamespacedCustomObject(
      {
        ...spark,
        namespace: 'team',
        name: 'job',
        body: {
          spec: { timeToLiveSeconds: 60 },
          status: { applicationState: { state: 'FAILED' } },
        },
      },
      merge,
    )) as Record<string, unknown> & { metadata: { generation: number } };
    expect(patched.status).toEqual({ applicationState: { state: 'RUNNING' } });
    expect(patched.metadata.generation).toBe(2);
    const statusPatch = (await custom.patchNamespacedCustomObjectStatus(
      {
        ...spark,
        namespace: 'team',
        name: 'job',
        body: { status: { applicationState: { state: 'COMPLETED' } } },
      },
      merge,
    )) as Record<string, unknown>;
    expect(statusPatch.status).toEqual({ applicationState: { state: 'COMPLETED' } });
  });

  it('refuses an update without resourceVersion (422) and a stale one (409)', async () => {
    const created = (await custom.createNamespacedCustomObject({
      ...spark,
      namespace: 'team',
      body: sparkApp('job'),
    })) as Record<string, unknown>;
    const noVersion = await rejection(
      custom.replaceNamespacedCustomObject({
        ...spark,
        namespace: 'team',
        name: 'job',
        body: sparkApp('job'),
      }),
    );
    expect(noVersion.code).toBe(422);
    await custom.replaceNamespacedCustomObject({
      ...spark,
      namespace: 'team',
      name: 'job',
      body: { ...created, spec: { type: 'Scala' } },
    });
    const stale = await rejection(
      custom.replaceNamespacedCustomObject({
        ...spark,
        namespace: 'team',
        name: 'job',
        body: { ...created, spec: { type: 'Java' } },
      }),
    );
    expect(stale).toMatchObject({ code: 409, status: { reason: 'Conflict' } });
  });

  it('computes the namespace quota usage from unfinished applications and enforces the object count', async () => {
    await core.createNamespacedResourceQuota({
      namespace: 'team',
      body: {
        metadata: { name: 'icepack' },
        spec: {
          hard: {
            'requests.cpu': '16',
            'requests.memory': '64Gi',
            'limits.memory': '64Gi',
            pods: '20',
            'count/sparkapplications.sparkoperator.k8s.io': '2',
          },
        },
      },
    });
    // A Python app: overhead max(384Mi, 0.4 × memory). Driver 1 core, 1g; 2 executors of 2 cores, 2g.
    await custom.createNamespacedCustomObject({ ...spark, namespace: 'team', body: sparkApp('a') });
    let quota = await core.readNamespacedResourceQuota({ name: 'icepack', namespace: 'team' });
    const bytes =
      2 ** 30 + Math.ceil(0.4 * 2 ** 30) + 2 * (2 * 2 ** 30 + Math.ceil(0.4 * 2 * 2 ** 30));
    expect(quota.status?.used).toEqual({
      'requests.cpu': '5',
      'requests.memory': String(bytes),
      'limits.memory': String(bytes),
      pods: '3',
      'count/sparkapplications.sparkoperator.k8s.io': '1',
    });
    expect(quota.status?.hard?.['requests.cpu']).toBe('16');

    const app = (await custom.getNamespacedCustomObject({
      ...spark,
      namespace: 'team',
      name: 'a',
    })) as Record<string, unknown>;
    await custom.replaceNamespacedCustomObjectStatus({
      ...spark,
      namespace: 'team',
      name: 'a',
      body: { ...app, status: { applicationState: { state: 'COMPLETED' } } },
    });
    quota = await core.readNamespacedResourceQuota({ name: 'icepack', namespace: 'team' });
    expect(quota.status?.used).toMatchObject({
      'requests.cpu': '0',
      pods: '0',
      'count/sparkapplications.sparkoperator.k8s.io': '1',
    });

    await custom.createNamespacedCustomObject({ ...spark, namespace: 'team', body: sparkApp('b') });
    const third = await rejection(
      custom.createNamespacedCustomObject({ ...spark, namespace: 'team', body: sparkApp('c') }),
    );
    expect(third.code).toBe(403);
    expect(third.status.message).toContain('exceeded quota: icepack');
  });
});

describe('fake API server: fault injection', () => {
  it('holds matching requests, and drops one whose caller went away before the release', async () => {
    const hold = api.hold((method, path) => method === 'POST' && path.endsWith('/configmaps'));
    const controller = new AbortController();
    const abandoned = fetch(`${api.url}/api/v1/namespaces/team/configmaps`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'abandoned' } }),
      signal: controller.signal,
    }).catch(() => 'aborted');
    const kept = core.createNamespacedConfigMap({
      namespace: 'team',
      body: { metadata: { name: 'kept' } },
    });
    for (let i = 0; i < 100 && hold.held() < 2; i += 1) await new Promise((r) => setTimeout(r, 10));
    expect(hold.held()).toBe(2);
    // Reads pass while writes are held.
    expect((await core.readNamespace({ name: 'team' })).metadata?.name).toBe('team');
    controller.abort();
    expect(await abandoned).toBe('aborted');
    for (let i = 0; i < 100 && hold.held() > 1; i += 1) await new Promise((r) => setTimeout(r, 10));
    expect(hold.held()).toBe(1);
    hold.release();
    expect((await kept).metadata?.name).toBe('kept');
    const names = (await core.listNamespacedConfigMap({ namespace: 'team' })).items.map(
      (c) => c.metadata?.name,
    );
    expect(names).toEqual(['kept']);
  });
});
