import { parseCpuMillicores, parseMemoryBytes } from '@icepack/types';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { readBindings } from './testing/binding-reader.ts';
import type { CatalogView } from './domain/catalog-record.ts';
import type { GroupView } from './domain/group-record.ts';
import { realClusterSuite } from './testing/real-cluster.ts';
import { startTestProvisioner } from './testing/test-provisioner.ts';
import type { TestProvisioner } from './testing/test-provisioner.ts';
import { until } from './testing/until.ts';

// The real local control plane (deploy/local/k8s.sh), shared with other tests: every name
// carries a fresh suffix, and each test's namespaces are deleted after it.
const infra = inject('infra');
const suite = realClusterSuite(infra.kube);
let p: TestProvisioner;

beforeEach(async () => {
  p = await startTestProvisioner({
    infra,
    kubeConfig: suite.access.kubeConfig,
    installation: suite.installation,
  });
});

afterEach(async () => {
  await p.stop();
});

describe("provisioner: catalogs and resource groups on the real control plane, with the chart's RBAC", () => {
  it('creates a catalog, checks it against the real REST catalog, and lists, updates and deletes it', async () => {
    const name = `lake-${suite.suffix}`;
    const created = await p.api<CatalogView>('POST', '/v1/catalogs', {
      name,
      type: 'rest',
      uri: infra.catalogUri,
      properties: { 'io-impl': 'org.apache.iceberg.hadoop.HadoopFileIO' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name,
      auth: { type: 'none' },
      status: { connectivity: { ok: true, status: 200 }, published: true },
    });

    const unreachable = await p.api<CatalogView>('POST', '/v1/catalogs', {
      name: `down-${suite.suffix}`,
      type: 'rest',
      uri: 'http://127.0.0.1:1',
    });
    expect(unreachable.status).toBe(201);
    expect(unreachable.body.status.connectivity).toMatchObject({ ok: false });
    expect(unreachable.body.status.connectivity.message).toMatch(/unreachable/);

    expect(
      (await p.api('POST', '/v1/catalogs', { name, type: 'rest', uri: infra.catalogUri })).status,
    ).toBe(409);
    const listed = await p.api<CatalogView[]>('GET', '/v1/catalogs');
    expect(listed.body.map((c) => c.name)).toEqual([`down-${suite.suffix}`, name]);

    const updated = await p.api<CatalogView>('PUT', `/v1/catalogs/${name}`, {
      type: 'rest',
      uri: infra.catalogUri,
      warehouse: 'wh',
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name, warehouse: 'wh', properties: {} });
    expect(
      (
        await p.api('PUT', `/v1/catalogs/${name}`, {
          name: 'other',
          type: 'rest',
          uri: infra.catalogUri,
        })
      ).body.fields,
    ).toEqual([expect.objectContaining({ path: 'name' })]);

    expect((await p.api('DELETE', `/v1/catalogs/${name}`)).status).toBe(204);
    expect((await p.api('GET', `/v1/catalogs/${name}`)).status).toBe(404);
  });

  it('runs the whole life of a group: every step, the objects, the bindings a consumer reads, the drain and the tombstone', async () => {
    const catalog = `sales-${suite.suffix}`;
    const group = `sales-${suite.suffix}`;
    const namespace = `icepack-${group}`;
    const reader = await readBindings(infra.kafkaBrokers, new Set([catalog]));
    try {
      expect(
        (
          await p.api('POST', '/v1/catalogs', {
            name: catalog,
            type: 'rest',
            uri: infra.catalogUri,
            warehouse: 'wh',
            auth: { type: 'bearer', token: { env: 'ICEPACK_SECRET_SALES_TOKEN' } },
          })
        ).status,
      ).toBe(201);
      const created = await p.api<GroupView>('POST', '/v1/resource-groups', {
        name: group,
        catalog,
        cpu: '8',
        memory: '32Gi',
        slots: 2,
        spark: { executorMemory: '8g', maxExecutors: 3 },
      });
      expect(created.status).toBe(201);
      expect(created.body.status.phase).toBe('ready');
      expect(
        created.body.status.steps.map(
          (s: { name: string; state: string }) => `${s.name}:${s.state}`,
        ),
      ).toEqual([
        'persisted:done',
        'namespace:done',
        'resourceQuota:done',
        'limitRange:done',
        'configMap:done',
        'serviceAccount:done',
        'role:done',
        'roleBinding:done',
        'ready:done',
        'bindingPublished:done',
      ]);

      const labels = {
        'app.kubernetes.io/managed-by': 'icepack',
        'icepack.io/group': group,
        'icepack.io/catalog': catalog,
      };
      const ns = await suite.core.readNamespace({ name: namespace });
      expect(ns.metadata?.labels).toMatchObject({
        ...labels,
        'pod-security.kubernetes.io/enforce': 'restricted',
      });
      expect(ns.metadata?.annotations).toMatchObject({
        'icepack.io/installation': suite.installation,
      });
      const quota = await suite.core.readNamespacedResourceQuota({ name: 'icepack', namespace });
      expect(quota.spec?.hard).toEqual({
        'requests.cpu': '8',
        'requests.memory': '32Gi',
        'limits.memory': '32Gi',
        pods: '12', // (slots 2 + smallSlots 1) × (driver + 3 executors)
      });
      // status.used comes from kube-controller-manager's resourcequota controller.
      const used = await until(
        'the quota controller to fill status.used',
        async () =>
          (await suite.core.readNamespacedResourceQuota({ name: 'icepack', namespace })).status
            ?.used,
      );
      expect(used).toEqual({
        'requests.cpu': '0',
        'requests.memory': '0',
        'limits.memory': '0',
        pods: '0',
      });
      expect(
        (await suite.core.readNamespacedLimitRange({ name: 'icepack', namespace })).spec?.limits,
      ).toMatchObject([{ type: 'Container', max: { cpu: '8', memory: '32Gi' } }]);
      const config = await suite.core.readNamespacedConfigMap({ name: 'icepack-spark', namespace });
      expect(config.data?.['spark-defaults.conf']).toContain(
        `spark.sql.catalog.${catalog}.uri ${infra.catalogUri}`,
      );
      // The secret is referenced by name, never resolved into the ConfigMap.
      expect(JSON.parse(config.data?.['catalog.json'] ?? '{}')).toMatchObject({
        auth: { type: 'bearer', token: { env: 'ICEPACK_SECRET_SALES_TOKEN' } },
      });
      expect(
        (await suite.core.readNamespacedServiceAccount({ name: 'icepack-spark', namespace }))
          .metadata?.name,
      ).toBe('icepack-spark');
      const role = await suite.rbac.readNamespacedRole({ name: 'icepack-spark-driver', namespace });
      expect((role.rules ?? []).flatMap((r) => r.resources ?? []).sort()).toEqual([
        'configmaps',
        'persistentvolumeclaims',
        'pods',
        'services',
      ]);
      expect(
        await suite.rbac.readNamespacedRoleBinding({ name: 'icepack-spark-driver', namespace }),
      ).toMatchObject({
        roleRef: { kind: 'Role', name: 'icepack-spark-driver' },
        subjects: [{ kind: 'ServiceAccount', name: 'icepack-spark', namespace }],
      });

      const ready = await until('the ready binding', () =>
        reader.events.find((e) => e.binding?.state === 'ready'),
      );
      expect(ready).toEqual({
        key: catalog,
        binding: {
          catalog,
          group,
          namespace,
          slots: 2,
          smallSlots: 1, // the default
          cpu: '8',
          memory: '32Gi',
          state: 'ready',
          runner: 'spark-operator',
          spark: {
            driverCores: 1,
            driverMemory: '2g',
            executorCores: 2,
            executorMemory: '8g',
            maxExecutors: 3,
            sparkConf: {},
          },
          updatedAt: expect.any(String) as unknown,
        },
      });
      expect(
        (await p.api<GroupView>('GET', `/v1/resource-groups/${group}`)).body.status.phase,
      ).toBe('ready');
      expect((await p.api<CatalogView>('GET', `/v1/catalogs/${catalog}`)).body.status.group).toBe(
        group,
      );
      // Bound: the catalog cannot go before its group.
      expect((await p.api('DELETE', `/v1/catalogs/${catalog}`)).status).toBe(409);
      // A changed catalog reaches its group's ConfigMap at once.
      await p.api('PUT', `/v1/catalogs/${catalog}`, {
        type: 'rest',
        uri: infra.catalogUri,
        warehouse: 'wh2',
      });
      const changed = await suite.core.readNamespacedConfigMap({
        name: 'icepack-spark',
        namespace,
      });
      expect(changed.data?.['spark-defaults.conf']).toContain(
        `spark.sql.catalog.${catalog}.warehouse wh2`,
      );

      const deleting = await p.api('DELETE', `/v1/resource-groups/${group}`);
      expect(deleting.status).toBe(202);
      await until('the group to be gone', async () =>
        (await p.api('GET', `/v1/resource-groups/${group}`)).status === 404 ? true : undefined,
      );
      // The group goes only once the namespace controller has emptied and removed it.
      expect(await suite.gone(namespace)).toBe(true);
      await until('the tombstone', () => reader.events.find((e) => e.binding === undefined));
      expect(reader.events.map((e) => e.binding?.state ?? 'tombstone')).toEqual([
        'ready',
        'draining',
        'tombstone',
      ]);
      // Unbound again: the catalog can go now.
      expect((await p.api('DELETE', `/v1/catalogs/${catalog}`)).status).toBe(204);
    } finally {
      await reader.stop();
    }
  });

  it('refuses an icepack-<group> namespace it does not own with 409 naming it, and never changes or deletes it', async () => {
    const catalog = `own-${suite.suffix}`;
    await p.api('POST', '/v1/catalogs', { name: catalog, type: 'rest', uri: infra.catalogUri });
    const body = (name: string) => ({ name, catalog, cpu: '4', memory: '8Gi', slots: 1 });
    /** The namespace is as its owner left it: no Icepack label, annotation or Pod Security label. */
    const untouched = async (name: string) => {
      const { labels, annotations } = (await suite.core.readNamespace({ name })).metadata ?? {};
      expect(labels).toMatchObject({ team: 'billing' });
      expect(Object.keys(labels ?? {}).filter((k) => /icepack|pod-security/.test(k))).toEqual([]);
      expect(annotations ?? {}).toEqual({});
      expect(
        (await suite.core.listNamespacedResourceQuota({ namespace: name })).items.map(
          (q) => q.metadata?.name,
        ),
      ).toEqual([]);
    };

    // Someone else's namespace of that name, and another Icepack installation's.
    await suite.foreign(`icepack-theirs-${suite.suffix}`, { labels: { team: 'billing' } });
    await suite.foreign(`icepack-other-${suite.suffix}`, {
      labels: { 'app.kubernetes.io/managed-by': 'icepack' },
      annotations: { 'icepack.io/installation': 'staging' },
    });
    const theirs = await p.api('POST', '/v1/resource-groups', body(`theirs-${suite.suffix}`));
    expect(theirs.status).toBe(409);
    expect(theirs.body.message).toContain(
      `namespace "icepack-theirs-${suite.suffix}" already exists and is not owned by this Icepack installation ("${suite.installation}"): it has no label app.kubernetes.io/managed-by=icepack`,
    );
    const other = await p.api('POST', '/v1/resource-groups', body(`other-${suite.suffix}`));
    expect(other.status).toBe(409);
    expect(other.body.message).toContain(
      'its annotation icepack.io/installation names installation "staging"',
    );
    // Nothing persisted, nothing written: the namespace is as its owner left it.
    expect((await p.api('GET', `/v1/resource-groups/theirs-${suite.suffix}`)).status).toBe(404);
    await untouched(`icepack-theirs-${suite.suffix}`);

    // A group whose namespace was replaced by someone else's meanwhile: the reconcile pass
    // refuses it (a failed step naming it) and the delete leaves it in place.
    const mine = `mine-${suite.suffix}`;
    const ns = `icepack-${mine}`;
    const catalog2 = `own2-${suite.suffix}`;
    await p.api('POST', '/v1/catalogs', { name: catalog2, type: 'rest', uri: infra.catalogUri });
    const created = await p.api<GroupView>('POST', '/v1/resource-groups', {
      ...body(mine),
      catalog: catalog2,
    });
    expect(created.status).toBe(201);
    expect((await suite.core.readNamespace({ name: ns })).metadata?.annotations).toEqual({
      'icepack.io/installation': suite.installation,
    });
    await suite.core.deleteNamespace({ name: ns });
    await until(`${ns} to be deleted`, () => suite.gone(ns));
    await suite.foreign(ns, { labels: { team: 'billing' } });
    await suite.core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'theirs' } },
    });
    await p.provisioner.reconciler.runOnce();
    const refused = await p.api<GroupView>('GET', `/v1/resource-groups/${mine}`);
    expect(refused.body.status.steps.find((s) => s.name === 'namespace')).toMatchObject({
      state: 'failed',
      message: expect.stringContaining(
        `namespace "${ns}" already exists and is not owned`,
      ) as unknown,
    });
    await untouched(ns);

    expect((await p.api('DELETE', `/v1/resource-groups/${mine}`)).status).toBe(202);
    await until('the group to be gone', async () =>
      (await p.api('GET', `/v1/resource-groups/${mine}`)).status === 404 ? true : undefined,
    );
    await untouched(ns);
    expect(
      (await suite.core.readNamespacedConfigMap({ name: 'theirs', namespace: ns })).metadata?.name,
    ).toBe('theirs');
  });

  it('answers 409 for a second group on one catalog and for a duplicate name, 422 for a missing catalog', async () => {
    const catalog = `one-${suite.suffix}`;
    await p.api('POST', '/v1/catalogs', { name: catalog, type: 'rest', uri: infra.catalogUri });
    expect(
      (
        await p.api('POST', '/v1/resource-groups', {
          name: `a-${suite.suffix}`,
          catalog,
          cpu: '4',
          memory: '8Gi',
          slots: 1,
        })
      ).status,
    ).toBe(201);
    const second = await p.api('POST', '/v1/resource-groups', {
      name: `b-${suite.suffix}`,
      catalog,
      cpu: '4',
      memory: '8Gi',
      slots: 1,
    });
    expect(second.status).toBe(409);
    expect(second.body.message).toBe(
      `catalog "${catalog}" is already bound to resource group "a-${suite.suffix}"; one group per catalog`,
    );
    expect(
      (
        await p.api('POST', '/v1/resource-groups', {
          name: `a-${suite.suffix}`,
          catalog,
          cpu: '4',
          memory: '8Gi',
          slots: 1,
        })
      ).status,
    ).toBe(409);
    const missing = await p.api('POST', '/v1/resource-groups', {
      name: `c-${suite.suffix}`,
      catalog: 'nope',
      cpu: '4',
      memory: '8Gi',
      slots: 1,
    });
    expect(missing.status).toBe(422);
    expect(missing.body.message).toMatch(/catalog "nope" does not exist/);
    expect(await suite.gone(`icepack-b-${suite.suffix}`)).toBe(true);
  });

  it('refuses a group that does not fit the free capacity with 422 and the figures', async () => {
    for (const n of ['x', 'y']) {
      await p.api('POST', '/v1/catalogs', {
        name: `${n}-${suite.suffix}`,
        type: 'rest',
        uri: infra.catalogUri,
      });
    }
    const x = {
      name: `x-${suite.suffix}`,
      catalog: `x-${suite.suffix}`,
      cpu: '3',
      memory: '7Gi',
      slots: 1,
    };
    expect((await p.api('POST', '/v1/resource-groups', x)).status).toBe(201);
    // The cluster is shared: the figures are checked against the real nodes and each other.
    const nodes = (await suite.core.listNode()).items.filter(
      (node) => node.spec?.unschedulable !== true,
    );
    const allocatableCpu = nodes.reduce(
      (total, node) => total + parseCpuMillicores(node.status?.allocatable?.cpu ?? '0'),
      0,
    );
    const allocatableMemory = nodes.reduce(
      (total, node) => total + parseMemoryBytes(node.status?.allocatable?.memory ?? '0'),
      0,
    );
    const tooBig = await p.api<{
      error: string;
      message: string;
      requested: { cpu: string; memory: string };
      allocatable: { cpu: string; memory: string };
      reserved: { cpu: string; memory: string };
      free: { cpu: string; memory: string };
    }>('POST', '/v1/resource-groups', {
      name: `y-${suite.suffix}`,
      catalog: `y-${suite.suffix}`,
      cpu: String(allocatableCpu / 1000 + 1),
      memory: '8Gi',
      slots: 1,
    });
    expect(tooBig.status).toBe(422);
    const { requested, allocatable, reserved, free } = tooBig.body;
    expect(tooBig.body.error).toBe('insufficient_capacity');
    expect(requested).toEqual({ cpu: String(allocatableCpu / 1000 + 1), memory: '8Gi' });
    expect(parseCpuMillicores(allocatable.cpu)).toBe(allocatableCpu);
    expect(parseMemoryBytes(allocatable.memory)).toBe(allocatableMemory);
    // Group x's quota is among the reservations.
    expect(parseCpuMillicores(reserved.cpu)).toBeGreaterThanOrEqual(3000);
    expect(parseMemoryBytes(reserved.memory)).toBeGreaterThanOrEqual(7 * 2 ** 30);
    expect(parseCpuMillicores(free.cpu)).toBe(allocatableCpu - parseCpuMillicores(reserved.cpu));
    expect(tooBig.body.message).toContain(
      `cpu ${requested.cpu} requested but only ${free.cpu} free`,
    );
    expect((await p.api('GET', `/v1/resource-groups/y-${suite.suffix}`)).status).toBe(404);
    expect(await suite.gone(`icepack-y-${suite.suffix}`)).toBe(true);
    expect(
      (
        await p.api('POST', '/v1/resource-groups', {
          name: `y-${suite.suffix}`,
          catalog: `y-${suite.suffix}`,
          cpu: '4',
          memory: '8Gi',
          slots: 1,
        })
      ).status,
    ).toBe(201);
  });

  it('rejects invalid names and bodies with 400 naming the field', async () => {
    const badGroup = await p.api('POST', '/v1/resource-groups', {
      name: 'Sales_Team',
      catalog: 'x',
      cpu: '4',
      memory: '8Gi',
      slots: 1,
    });
    expect(badGroup.status).toBe(400);
    expect(badGroup.body.fields?.map((f) => f.path)).toEqual(['name']);
    const tooLong = await p.api('POST', '/v1/resource-groups', {
      name: 'a'.repeat(56),
      catalog: 'x',
      cpu: '4',
      memory: '8Gi',
      slots: 1,
    });
    expect(tooLong.body.fields).toEqual([
      expect.objectContaining({ path: 'name', message: 'must be at most 55 characters' }),
    ]);
    const badCatalog = await p.api('POST', '/v1/catalogs', {
      name: 'My.Catalog',
      type: 'rest',
      uri: 'ftp://x',
    });
    expect(badCatalog.status).toBe(400);
    expect(badCatalog.body.fields?.map((f) => f.path).sort()).toEqual(['name', 'uri']);
    const badQuantity = await p.api('POST', '/v1/resource-groups', {
      name: 'ok',
      catalog: 'x',
      cpu: 'lots',
      memory: '8Gi',
      slots: 0,
    });
    expect(badQuantity.body.fields?.map((f) => f.path).sort()).toEqual(['cpu', 'slots']);
  });

  it('answers 401 without the token or with a wrong one, and serves its OpenAPI document', async () => {
    expect((await p.api('GET', '/v1/catalogs', undefined, null)).status).toBe(401);
    expect(
      (await p.api('GET', '/v1/resource-groups', undefined, 'wrong-token-of-some-length')).status,
    ).toBe(401);
    expect((await p.api('POST', '/v1/resource-groups', { name: 'x' }, null)).status).toBe(401);
    const doc = await p.api<{
      openapi: string;
      paths: object;
      components: { schemas: { ResourceGroup: { properties: { name: { pattern: string } } } } };
    }>('GET', '/v1/openapi.json', undefined, null);
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe('3.1.0');
    expect(Object.keys(doc.body.paths)).toEqual([
      '/v1/catalogs',
      '/v1/catalogs/{name}',
      '/v1/resource-groups',
      '/v1/resource-groups/{name}',
    ]);
    expect(doc.body.components.schemas.ResourceGroup.properties.name.pattern).toBe(
      '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
    );
  });
});
