import { randomUUID } from 'node:crypto';
import { startFakeKubeApi } from '@icepack/test/k8s';
import type { FakeKubeApi } from '@icepack/test/k8s';
import { resourceTypeOf } from '@icepack/test/k8s';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { readBindings } from './testing/binding-reader.ts';
import type { CatalogView } from './domain/catalog-record.ts';
import type { GroupView } from './domain/group-record.ts';
import { startTestProvisioner } from './testing/test-provisioner.ts';
import type { TestProvisioner } from './testing/test-provisioner.ts';

const infra = inject('infra');
const KUBE_TOKEN = 'fake-kube-token';

let kube: FakeKubeApi;
let p: TestProvisioner;
/** Fresh names per test: the Kafka topic and Redis are shared with other runs. */
let suffix: string;

beforeEach(async () => {
  kube = await startFakeKubeApi({
    token: KUBE_TOKEN,
    nodes: [
      { name: 'n1', cpu: '16', memory: '64Gi' },
      { name: 'n2', cpu: '8', memory: '32Gi' },
    ],
  });
  p = await startTestProvisioner({ infra, kubeUrl: kube.url, kubeToken: KUBE_TOKEN });
  suffix = randomUUID().slice(0, 8);
});

afterEach(async () => {
  await p.stop();
  await kube.stop();
});

function get(plural: string, namespace: string, name: string, group = '') {
  return kube.store.get(resourceTypeOf(plural, group), namespace, name);
}

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
): Promise<T> {
  for (let i = 0; i < 300; i += 1) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('provisioner: catalogs and resource groups against the fake API server', () => {
  it('creates a catalog, checks it against the real REST catalog, and lists, updates and deletes it', async () => {
    const name = `lake-${suffix}`;
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
      name: `down-${suffix}`,
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
    expect(listed.body.map((c) => c.name)).toEqual([`down-${suffix}`, name]);

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
    const catalog = `sales-${suffix}`;
    const group = `sales-${suffix}`;
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
      expect(get('namespaces', '', namespace).metadata.labels).toMatchObject(labels);
      expect(get('resourcequotas', namespace, 'icepack').spec).toEqual({
        hard: {
          'requests.cpu': '8',
          'requests.memory': '32Gi',
          'limits.memory': '32Gi',
          pods: '8',
        },
      });
      expect(get('limitranges', namespace, 'icepack').spec).toMatchObject({
        limits: [{ type: 'Container', max: { cpu: '8', memory: '32Gi' } }],
      });
      const config = get('configmaps', namespace, 'icepack-spark') as unknown as {
        data: Record<string, string>;
      };
      expect(config.data['spark-defaults.conf']).toContain(
        `spark.sql.catalog.${catalog}.uri ${infra.catalogUri}`,
      );
      // The secret is referenced by name, never resolved into the ConfigMap.
      expect(JSON.parse(config.data['catalog.json'] ?? '{}')).toMatchObject({
        auth: { type: 'bearer', token: { env: 'ICEPACK_SECRET_SALES_TOKEN' } },
      });
      expect(get('serviceaccounts', namespace, 'icepack-spark').metadata.name).toBe(
        'icepack-spark',
      );
      const role = get(
        'roles',
        namespace,
        'icepack-spark-driver',
        'rbac.authorization.k8s.io',
      ) as unknown as { rules: { resources: string[] }[] };
      expect(role.rules.flatMap((r) => r.resources).sort()).toEqual([
        'configmaps',
        'persistentvolumeclaims',
        'pods',
        'services',
      ]);
      expect(
        get('rolebindings', namespace, 'icepack-spark-driver', 'rbac.authorization.k8s.io'),
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
      const changed = get('configmaps', namespace, 'icepack-spark') as unknown as {
        data: Record<string, string>;
      };
      expect(changed.data['spark-defaults.conf']).toContain(
        `spark.sql.catalog.${catalog}.warehouse wh2`,
      );

      const deleting = await p.api('DELETE', `/v1/resource-groups/${group}`);
      expect(deleting.status).toBe(202);
      await until('the group to be gone', async () =>
        (await p.api('GET', `/v1/resource-groups/${group}`)).status === 404 ? true : undefined,
      );
      expect(() => get('namespaces', '', namespace)).toThrow(/not found/);
      expect(kube.store.list(resourceTypeOf('configmaps'), namespace).items).toEqual([]);
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

  it('answers 409 for a second group on one catalog and for a duplicate name, 422 for a missing catalog', async () => {
    const catalog = `one-${suffix}`;
    await p.api('POST', '/v1/catalogs', { name: catalog, type: 'rest', uri: infra.catalogUri });
    expect(
      (
        await p.api('POST', '/v1/resource-groups', {
          name: `a-${suffix}`,
          catalog,
          cpu: '4',
          memory: '8Gi',
          slots: 1,
        })
      ).status,
    ).toBe(201);
    const second = await p.api('POST', '/v1/resource-groups', {
      name: `b-${suffix}`,
      catalog,
      cpu: '4',
      memory: '8Gi',
      slots: 1,
    });
    expect(second.status).toBe(409);
    expect(second.body.message).toBe(
      `catalog "${catalog}" is already bound to resource group "a-${suffix}"; one group per catalog`,
    );
    expect(
      (
        await p.api('POST', '/v1/resource-groups', {
          name: `a-${suffix}`,
          catalog,
          cpu: '4',
          memory: '8Gi',
          slots: 1,
        })
      ).status,
    ).toBe(409);
    const missing = await p.api('POST', '/v1/resource-groups', {
      name: `c-${suffix}`,
      catalog: 'nope',
      cpu: '4',
      memory: '8Gi',
      slots: 1,
    });
    expect(missing.status).toBe(422);
    expect(missing.body.message).toMatch(/catalog "nope" does not exist/);
    expect(
      kube.store.list(resourceTypeOf('namespaces'), undefined).items.map((n) => n.metadata.name),
    ).not.toContain(`icepack-b-${suffix}`);
  });

  it('refuses a group that does not fit the free capacity with 422 and the figures', async () => {
    for (const [n, cpu, memory] of [
      ['x', '10', '40Gi'],
      ['y', '8', '30Gi'],
    ] as const) {
      await p.api('POST', '/v1/catalogs', {
        name: `${n}-${suffix}`,
        type: 'rest',
        uri: infra.catalogUri,
      });
      if (n === 'x')
        expect(
          (
            await p.api('POST', '/v1/resource-groups', {
              name: `${n}-${suffix}`,
              catalog: `${n}-${suffix}`,
              cpu,
              memory,
              slots: 1,
            })
          ).status,
        ).toBe(201);
    }
    // 24 cpu and 96Gi allocatable on two nodes; group x holds 10 and 40Gi.
    const tooBig = await p.api('POST', '/v1/resource-groups', {
      name: `y-${suffix}`,
      catalog: `y-${suffix}`,
      cpu: '16',
      memory: '60Gi',
      slots: 1,
    });
    expect(tooBig.status).toBe(422);
    expect(tooBig.body).toMatchObject({
      error: 'insufficient_capacity',
      requested: { cpu: '16', memory: '60Gi' },
      allocatable: { cpu: '24', memory: '96Gi' },
      reserved: { cpu: '10', memory: '40Gi' },
      free: { cpu: '14', memory: '56Gi' },
    });
    expect(tooBig.body.message).toContain('cpu 16 requested but only 14 free');
    expect(tooBig.body.message).toContain('memory 60Gi requested but only 56Gi free');
    expect((await p.api('GET', `/v1/resource-groups/y-${suffix}`)).status).toBe(404);
    expect(
      (
        await p.api('POST', '/v1/resource-groups', {
          name: `y-${suffix}`,
          catalog: `y-${suffix}`,
          cpu: '14',
          memory: '56Gi',
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
