import { randomBytes } from 'node:crypto';
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
} from '@kubernetes/client-node';
import { adminKubeConfig, type ServiceAccountAccess } from '@icepack/test';
import { parseCatalog, parseResourceGroup } from '@icepack/types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
// The provisioner's own adapter makes the group namespace (test-only import across services).
import { provisionGroup } from '@icepack/provisioner/testing';
import { SPARK_API } from '../runners/spark-application.ts';
import { chartDispatcherAccess } from './testing/real-group.ts';

// What the dispatcher must NOT be able to do, on the real API server with a token bound to
// exactly the ClusterRole the chart renders for it (in the group's namespace: the chart's
// `rbac.dispatcher.namespaces` form). Its positive rights are used for real by the
// operator-real, dispatch-outcomes, dispatch-crash and kube-quota tests and the Kubernetes
// end-to-end test; a right the chart gave beyond them would pass those, so it is checked here.
const infra = inject('infra');
const suffix = randomBytes(3).toString('hex');
const name = `rights${suffix}`;
const namespace = `icepack-${name}`;
/** Another namespace, where the dispatcher has no binding. */
const elsewhere = `rights-other-${suffix}`;

let admin: KubeConfig;
let dispatcher: ServiceAccountAccess;

/** The status code of a call: 200 when it succeeded. */
async function statusOf(call: () => Promise<unknown>): Promise<number> {
  try {
    await call();
    return 200;
  } catch (error) {
    if (error instanceof ApiException) return error.code;
    throw error;
  }
}

const application = (metadataName: string) => ({
  apiVersion: `${SPARK_API.group}/${SPARK_API.version}`,
  kind: 'SparkApplication',
  metadata: { name: metadataName },
  spec: {
    type: 'Python',
    mode: 'cluster',
    image: 'x',
    mainApplicationFile: 'local:///x.py',
    sparkVersion: '4.0.1',
    driver: { cores: 1, memory: '1g' },
    executor: { cores: 1, instances: 1, memory: '1g' },
  },
});

beforeAll(async () => {
  admin = adminKubeConfig(infra.kube);
  const group = parseResourceGroup({ name, catalog: name, cpu: '4', memory: '8Gi', slots: 1 });
  const catalog = parseCatalog({ name, type: 'rest', uri: infra.catalogUri });
  await provisionGroup(admin, `rights-${suffix}`, group, catalog);
  await admin.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: elsewhere } } });
  dispatcher = await chartDispatcherAccess(admin, namespace, suffix);
}, 120_000);

afterAll(async () => {
  await dispatcher?.cleanup();
  const core = admin?.makeApiClient(CoreV1Api);
  for (const ns of [namespace, elsewhere]) await statusOf(() => core.deleteNamespace({ name: ns }));
});

describe("the dispatcher's chart rights on the real API server", () => {
  it('holds what it uses and no more: no secrets, no pod listing or creation, no logs, nothing outside its namespaces, no quota changes', async () => {
    const core = dispatcher.kubeConfig.makeApiClient(CoreV1Api);
    const custom = dispatcher.kubeConfig.makeApiClient(CustomObjectsApi);
    // What it uses (dry runs: nothing is stored, the operator sees nothing).
    const allowed: Record<string, () => Promise<unknown>> = {
      'create a SparkApplication in its namespace': () =>
        custom.createNamespacedCustomObject({
          ...SPARK_API,
          namespace,
          body: application('allowed'),
          dryRun: 'All',
        }),
      'list SparkApplications in its namespace': () =>
        custom.listNamespacedCustomObject({ ...SPARK_API, namespace }),
      'list ResourceQuotas in its namespace': () => core.listNamespacedResourceQuota({ namespace }),
    };
    const forbidden: Record<string, () => Promise<unknown>> = {
      'list secrets in its namespace': () => core.listNamespacedSecret({ namespace }),
      'read a secret in its namespace': () => core.readNamespacedSecret({ name: 'any', namespace }),
      'list pods (get only: a run’s driver pod by name)': () =>
        core.listNamespacedPod({ namespace }),
      'create a pod': () =>
        core.createNamespacedPod({
          namespace,
          body: { metadata: { name: 'x' }, spec: { containers: [{ name: 'x', image: 'x' }] } },
          dryRun: 'All',
        }),
      'read a pod’s log': () => core.readNamespacedPodLog({ name: 'any', namespace }),
      'read a ConfigMap': () => core.readNamespacedConfigMap({ name: 'icepack-spark', namespace }),
      'change a ResourceQuota': () =>
        core.deleteNamespacedResourceQuota({ name: 'icepack', namespace, dryRun: 'All' }),
      'patch a SparkApplication (create, get, list, watch, delete only)': () =>
        custom.patchNamespacedCustomObject({
          ...SPARK_API,
          namespace,
          name: 'any',
          body: [{ op: 'add', path: '/metadata/labels', value: {} }],
        }),
      'create a SparkApplication in another namespace': () =>
        custom.createNamespacedCustomObject({
          ...SPARK_API,
          namespace: elsewhere,
          body: application('elsewhere'),
          dryRun: 'All',
        }),
      'list ResourceQuotas in another namespace': () =>
        core.listNamespacedResourceQuota({ namespace: elsewhere }),
      'create a namespace': () =>
        core.createNamespace({ body: { metadata: { name: `x-${suffix}` } }, dryRun: 'All' }),
    };
    const codes = async (calls: Record<string, () => Promise<unknown>>) =>
      Object.fromEntries(
        await Promise.all(
          Object.entries(calls).map(async ([what, call]) => [what, await statusOf(call)]),
        ),
      ) as Record<string, number>;
    expect(await codes(allowed)).toEqual(
      Object.fromEntries(Object.keys(allowed).map((what) => [what, 200])),
    );
    expect(await codes(forbidden)).toEqual(
      Object.fromEntries(Object.keys(forbidden).map((what) => [what, 403])),
    );
  }, 60_000);
});
