import {
  CoreV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
  type KubeConfig,
  type V1Pod,
} from '@kubernetes/client-node';
import { kubeConfigWithToken } from '@icepack/test';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { GroupView } from './domain/group-record.ts';
import { readBindings } from './testing/binding-reader.ts';
import {
  chartProvisionerAccess,
  realClusterSuite,
  refusal,
  statusOf,
} from './testing/real-cluster.ts';
import { startTestProvisioner } from './testing/test-provisioner.ts';
import type { TestProvisioner } from './testing/test-provisioner.ts';
import { until } from './testing/until.ts';

// What only a real API server shows: Pod Security admission, RBAC (the chart's rights and
// nothing more), LimitRange defaults, and namespace deletion held by finalizers.
const infra = inject('infra');
const suite = realClusterSuite(infra.kube);
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function provisioner(kubeConfig: KubeConfig = suite.access.kubeConfig) {
  const p = await startTestProvisioner({ infra, kubeConfig, installation: suite.installation });
  cleanups.push(() => p.stop());
  return p;
}

/** A ready group `<prefix>-<suffix>` (catalog of the same name); its namespace. */
async function readyGroup(p: TestProvisioner, prefix: string): Promise<string> {
  const name = `${prefix}-${suite.suffix}`;
  await p.api('POST', '/v1/catalogs', { name, type: 'rest', uri: infra.catalogUri });
  const created = await p.api<GroupView>('POST', '/v1/resource-groups', {
    name,
    catalog: name,
    cpu: '4',
    memory: '8Gi',
    slots: 1,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return `icepack-${name}`;
}

/** A token of the group's Spark-driver ServiceAccount: the driver creates the executor pods. */
async function driverKubeConfig(namespace: string): Promise<KubeConfig> {
  const request = await suite.core.createNamespacedServiceAccountToken({
    name: 'icepack-spark',
    namespace,
    body: { spec: { audiences: [], expirationSeconds: 600 } },
  });
  return kubeConfigWithToken(suite.admin, request.status?.token ?? '', `driver-${namespace}`);
}

const IMAGE = 'apache/spark:4.0.1-python3';

/**
 * A pod shaped like Spark's driver: the job image's user, Spark's volumes (local dir on
 * emptyDir, Spark conf from a ConfigMap), no resources (the LimitRange fills them in).
 */
function sparkPod(
  name: string,
  security: Pick<V1Pod['spec'] & object, 'securityContext'>,
  container: object,
): V1Pod {
  return {
    metadata: { name, labels: { 'spark-role': 'driver' } },
    spec: {
      serviceAccountName: 'icepack-spark',
      restartPolicy: 'Never',
      ...security,
      volumes: [
        { name: 'spark-local-dir-1', emptyDir: {} },
        { name: 'spark-conf-volume-driver', configMap: { name: 'icepack-spark' } },
      ],
      containers: [
        {
          name: 'spark-kubernetes-driver',
          image: IMAGE,
          args: ['driver', 'local:///opt/icepack/jobs/spark/icepack_job.py'],
          volumeMounts: [
            { name: 'spark-local-dir-1', mountPath: '/var/data/spark-local-dir-1' },
            { name: 'spark-conf-volume-driver', mountPath: '/opt/spark/conf' },
          ],
          ...container,
        },
      ],
    },
  };
}

/** The security context decision 0009 asks of the SparkApplication's pod templates. */
const RESTRICTED_POD = {
  securityContext: {
    runAsNonRoot: true,
    runAsUser: 185,
    runAsGroup: 185,
    fsGroup: 185,
    seccompProfile: { type: 'RuntimeDefault' },
  },
};
const RESTRICTED_CONTAINER = {
  securityContext: {
    runAsNonRoot: true,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  },
};

describe('provisioner: group namespaces on the real API server', () => {
  it('enforce Pod Security restricted: a privileged pod and a pod without a security context are refused, a restricted Spark pod is admitted with the LimitRange defaults', async () => {
    const p = await provisioner();
    const namespace = await readyGroup(p, 'psa');
    const driver = (await driverKubeConfig(namespace)).makeApiClient(CoreV1Api);

    const privileged = await refusal(
      driver.createNamespacedPod({
        namespace,
        body: sparkPod('privileged', {}, { securityContext: { privileged: true } }),
      }),
    );
    expect(privileged).toContain('violates PodSecurity "restricted:latest"');
    expect(privileged).toContain('privileged');
    // What a SparkApplication without the templates' security context produces today.
    const bare = await refusal(
      driver.createNamespacedPod({ namespace, body: sparkPod('bare', {}, {}) }),
    );
    expect(bare).toContain('violates PodSecurity "restricted:latest"');
    for (const rule of [
      'allowPrivilegeEscalation != false',
      'runAsNonRoot != true',
      'seccompProfile',
    ])
      expect(bare).toContain(rule);

    const admitted = await driver.createNamespacedPod({
      namespace,
      body: sparkPod('restricted', RESTRICTED_POD, RESTRICTED_CONTAINER),
    });
    expect(admitted.metadata?.name).toBe('restricted');
    // LimitRange admission filled what the pod left out (the quota needs a memory limit); the
    // API server defaulted the cpu limit to the LimitRange's max, the group's cpu.
    expect(admitted.spec?.containers[0]?.resources).toEqual({
      requests: { cpu: '500m', memory: '512Mi' },
      limits: { cpu: '4', memory: '1Gi' },
    });
    const used = await until('the quota controller to count the pod', async () => {
      const quota = await suite.core.readNamespacedResourceQuota({ name: 'icepack', namespace });
      return quota.status?.used?.pods === '1' ? quota.status.used : undefined;
    });
    expect(used).toMatchObject({
      'requests.cpu': '500m',
      'requests.memory': '512Mi',
      'limits.memory': '1Gi',
    });
  });

  it('the provisioner holds the chart rights and no more: no secrets, no cluster RBAC, no Role beyond the driver rights, no SparkApplication or quota deletion', async () => {
    const p = await provisioner();
    const namespace = await readyGroup(p, 'rbac');
    const kc = suite.access.kubeConfig;
    const core = kc.makeApiClient(CoreV1Api);
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const forbidden: Record<string, () => Promise<unknown>> = {
      'list secrets in kube-system': () => core.listNamespacedSecret({ namespace: 'kube-system' }),
      'list secrets in a group namespace': () => core.listNamespacedSecret({ namespace }),
      'read a secret in a group namespace': () =>
        core.readNamespacedSecret({ name: 'any', namespace }),
      'create a secret': () =>
        core.createNamespacedSecret({ namespace, body: { metadata: { name: 'x' } } }),
      'create a ClusterRoleBinding': () =>
        rbac.createClusterRoleBinding({
          body: {
            metadata: { name: `escalate-${suite.suffix}` },
            roleRef: {
              apiGroup: 'rbac.authorization.k8s.io',
              kind: 'ClusterRole',
              name: 'cluster-admin',
            },
            subjects: [{ kind: 'User', name: 'mallory' }],
          },
        }),
      'create a Role granting secrets': () =>
        rbac.createNamespacedRole({
          namespace,
          body: {
            metadata: { name: 'reader' },
            rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
          },
        }),
      'create a SparkApplication': () =>
        custom.createNamespacedCustomObject({
          group: 'sparkoperator.k8s.io',
          version: 'v1beta2',
          plural: 'sparkapplications',
          namespace,
          body: {
            apiVersion: 'sparkoperator.k8s.io/v1beta2',
            kind: 'SparkApplication',
            metadata: { name: 'x' },
            spec: {
              type: 'Python',
              mainApplicationFile: 'local:///x.py',
              sparkVersion: '4.0.1',
              driver: {},
              executor: {},
            },
          },
        }),
      'delete the group quota': () =>
        core.deleteNamespacedResourceQuota({ name: 'icepack', namespace }),
      'patch a node': () =>
        core.patchNode({
          name: infra.kube.node,
          body: { metadata: { labels: { mallory: 'was-here' } } },
        }),
    };
    const statuses: Record<string, number> = {};
    for (const [what, call] of Object.entries(forbidden)) statuses[what] = await statusOf(call());
    expect(statuses).toEqual(Object.fromEntries(Object.keys(forbidden).map((what) => [what, 403])));
    // The Role escalation is refused by RBAC's escalation check, not for lack of `create`.
    const escalation = await refusal(
      rbac.createNamespacedRole({
        namespace,
        body: {
          metadata: { name: 'reader2' },
          rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
        },
      }),
    );
    expect(escalation).toContain('attempting to grant RBAC permissions not currently held');
  });

  it('with driverRights=escalate the provisioner still creates the driver Role and binding, holding none of the driver rights', async () => {
    const escalate = await chartProvisionerAccess(suite.admin, `esc-${suite.suffix}`, 'escalate');
    cleanups.push(() => escalate.cleanup());
    const p = await provisioner(escalate.kubeConfig);
    const namespace = await readyGroup(p, 'esc');
    const role = await suite.rbac.readNamespacedRole({ name: 'icepack-spark-driver', namespace });
    expect(role.rules?.flatMap((r) => r.resources ?? []).sort()).toEqual([
      'configmaps',
      'persistentvolumeclaims',
      'pods',
      'services',
    ]);
    expect(
      await statusOf(
        escalate.kubeConfig.makeApiClient(CoreV1Api).createNamespacedPod({
          namespace,
          body: sparkPod('x', RESTRICTED_POD, RESTRICTED_CONTAINER),
        }),
      ),
    ).toBe(403);
  });

  it('deleting a group waits for the namespace finalizers: the group stays deleting and its binding untombstoned until the namespace is gone', async () => {
    const p = await provisioner();
    const name = `fin-${suite.suffix}`;
    const reader = await readBindings(infra.kafkaBrokers, new Set([name]));
    cleanups.push(() => reader.stop());
    const namespace = await readyGroup(p, 'fin');
    // Something in the namespace that its deletion must wait for.
    await suite.core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'held', finalizers: ['icepack.io/test-hold'] } },
    });
    const release = async () => {
      const held = await suite.core.readNamespacedConfigMap({ name: 'held', namespace });
      await suite.core.replaceNamespacedConfigMap({
        name: 'held',
        namespace,
        body: { ...held, metadata: { ...held.metadata, finalizers: [] } },
      });
    };
    cleanups.push(() => statusOf(release()));

    expect((await p.api('DELETE', `/v1/resource-groups/${name}`)).status).toBe(202);
    const terminating = await until('the namespace to be terminating and held', async () => {
      const ns = await suite.core.readNamespace({ name: namespace });
      const held = await suite.core.readNamespacedConfigMap({ name: 'held', namespace });
      return ns.metadata?.deletionTimestamp !== undefined &&
        held.metadata?.deletionTimestamp !== undefined
        ? ns
        : undefined;
    });
    expect(terminating.status?.phase).toBe('Terminating');
    // The namespace is not gone yet: neither is the group, nor is its binding tombstoned.
    await p.provisioner.reconciler.runOnce();
    const waiting = await p.api<GroupView>('GET', `/v1/resource-groups/${name}`);
    expect(waiting.status).toBe(200);
    expect(waiting.body.status.phase).toBe('deleting');
    expect(reader.events.map((e) => e.binding?.state ?? 'tombstone')).not.toContain('tombstone');

    await release();
    await until('the group to go', async () =>
      (await p.api('GET', `/v1/resource-groups/${name}`)).status === 404 ? true : undefined,
    );
    expect(await suite.gone(namespace)).toBe(true);
    await until('the tombstone', () =>
      Promise.resolve(reader.events.find((e) => e.binding === undefined)),
    );
    expect(reader.events.map((e) => e.binding?.state ?? 'tombstone')).toEqual([
      'ready',
      'draining',
      'tombstone',
    ]);
  });
});
