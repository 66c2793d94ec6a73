import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
  type KubeConfig,
  type V1Pod,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runLocalScriptOrThrow } from '../infra/local-script.ts';
import { adminKubeConfig, serviceAccountKubeConfig, whoAmI } from './control-plane.ts';

const infra = inject('infra');
const suffix = randomBytes(3).toString('hex');
const ns = `it-k8s-real-${suffix}`;

let admin: KubeConfig;
let core: CoreV1Api;

/** Polls `check` until it returns a value (not undefined), or fails after `seconds`. */
async function eventually<T>(
  what: string,
  seconds: number,
  check: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not after ${String(seconds)}s`);
    await sleep(200);
  }
}

async function statusOf(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 200;
  } catch (error) {
    if (error instanceof ApiException) return error.code;
    throw error;
  }
}

const pod = (name: string, cpu: string, labels: Record<string, string> = {}): V1Pod => ({
  metadata: { name, labels },
  spec: {
    restartPolicy: 'Never',
    containers: [
      {
        name: 'c',
        image: 'busybox',
        resources: { requests: { cpu, memory: '64Mi' }, limits: { cpu, memory: '64Mi' } },
      },
    ],
  },
});

beforeAll(async () => {
  admin = adminKubeConfig(infra.kube);
  core = admin.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: ns } } });
});

afterAll(async () => {
  await core?.deleteNamespace({ name: ns }).catch(() => undefined);
});

describe('the local control plane (deploy/local/k8s.sh) is a real Kubernetes', () => {
  it('is left as it is by a second `k8s.sh up`: a test file beside this one reads the same kubeconfigs and spark-submit', async () => {
    const dir = dirname(infra.kube.kubeconfig);
    const files = [
      infra.kube.kubeconfig,
      join(dir, 'spark-operator.kubeconfig'),
      join(dir, 'spark-home', 'bin', 'spark-submit'),
    ];
    const look = async () =>
      (await Promise.all(files.map((f) => stat(f)))).map((s) => ({ ino: s.ino, mtime: s.mtimeMs }));
    const before = await look();
    await runLocalScriptOrThrow('k8s.sh', ['up']);
    expect(await look()).toEqual(before);
  });

  it('authenticates the admin by token and creates the default ServiceAccount of a namespace', async () => {
    expect(await whoAmI(admin)).toBe('admin');
    // The serviceaccount controller of kube-controller-manager does this, not the API server.
    const sa = await eventually('default ServiceAccount', 30, () =>
      core.readNamespacedServiceAccount({ name: 'default', namespace: ns }),
    );
    expect(sa.metadata?.name).toBe('default');
  });

  it('fills quota status.used from the controller and refuses an over-quota pod at admission', async () => {
    await eventually('default ServiceAccount', 30, () =>
      core.readNamespacedServiceAccount({ name: 'default', namespace: ns }),
    );
    // A pod that exists before the quota: only the resourcequota controller can count it.
    await core.createNamespacedPod({ namespace: ns, body: pod('before-quota', '500m') });
    await core.createNamespacedResourceQuota({
      namespace: ns,
      body: { metadata: { name: 'compute' }, spec: { hard: { 'requests.cpu': '1', pods: '5' } } },
    });
    const used = await eventually('quota status.used', 60, async () => {
      const quota = await core.readNamespacedResourceQuota({ name: 'compute', namespace: ns });
      return quota.status?.used?.pods === '1' ? quota.status.used : undefined;
    });
    expect(used).toEqual({ pods: '1', 'requests.cpu': '500m' });

    const refused = await core
      .createNamespacedPod({ namespace: ns, body: pod('over-quota', '600m') })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(ApiException);
    expect((refused as ApiException<string>).code).toBe(403);
    expect(String((refused as ApiException<string>).body)).toMatch(/exceeded quota: compute/);
    // Within the quota it is admitted (and counted by admission at once).
    await core.createNamespacedPod({ namespace: ns, body: pod('within-quota', '400m') });
    const after = await core.readNamespacedResourceQuota({ name: 'compute', namespace: ns });
    expect(after.status?.used).toEqual({ pods: '2', 'requests.cpu': '900m' });
  });

  it('runs kwok pods but leaves Spark driver pods to the kubelet stand-in', async () => {
    await core.createNamespacedPod({ namespace: ns, body: pod('plain', '10m') });
    await core.createNamespacedPod({
      namespace: ns,
      body: pod('some-driver', '10m', { 'spark-role': 'driver' }),
    });
    const plain = await eventually('plain pod Running', 60, async () => {
      const p = await core.readNamespacedPod({ name: 'plain', namespace: ns });
      return p.status?.phase === 'Running' ? p : undefined;
    });
    expect(plain.spec?.nodeName).toBe(infra.kube.node);
    const driver = await core.readNamespacedPod({ name: 'some-driver', namespace: ns });
    expect(driver.spec?.nodeName).toBe(infra.kube.node); // scheduled by kube-scheduler
    expect(driver.status?.phase).toBe('Pending'); // but nobody runs it
  });

  it('gives a ServiceAccount token exactly the rights of its Role (TokenRequest + RBAC)', async () => {
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: ns,
      body: {
        metadata: { name: 'read-configmaps' },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
      },
    });
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'cm' }, data: { a: 'b' } },
    });
    const access = await serviceAccountKubeConfig(admin, {
      namespace: ns,
      name: 'reader',
      roles: [{ kind: 'Role', name: 'read-configmaps' }],
      expirationSeconds: 600,
    });
    try {
      expect(await whoAmI(access.kubeConfig)).toBe(`system:serviceaccount:${ns}:reader`);
      const sa = access.kubeConfig.makeApiClient(CoreV1Api);
      const list = await sa.listNamespacedConfigMap({ namespace: ns });
      expect(list.items.map((c) => c.metadata?.name)).toContain('cm');
      expect(await statusOf(sa.readNamespacedConfigMap({ name: 'cm', namespace: ns }))).toBe(200);
      // What the Role does not grant is forbidden.
      expect(
        await statusOf(
          sa.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'x' } } }),
        ),
      ).toBe(403);
      expect(await statusOf(sa.deleteNamespacedConfigMap({ name: 'cm', namespace: ns }))).toBe(403);
      expect(await statusOf(sa.listNamespacedSecret({ namespace: ns }))).toBe(403);
      expect(await statusOf(sa.listNamespacedConfigMap({ namespace: 'default' }))).toBe(403);
      expect(await statusOf(sa.listNamespace())).toBe(403);
    } finally {
      await access.cleanup();
    }
    // The binding is gone: the same token is now denied.
    const sa = access.kubeConfig.makeApiClient(CoreV1Api);
    expect(
      await eventually('binding removed', 30, async () =>
        (await statusOf(sa.listNamespacedConfigMap({ namespace: ns }))) === 403 ? true : undefined,
      ),
    ).toBe(true);
  });

  it('deletes a namespace with its objects (the namespace controller lifts its finalizer)', async () => {
    const other = `it-k8s-real-del-${suffix}`;
    await core.createNamespace({ body: { metadata: { name: other } } });
    await core.createNamespacedConfigMap({ namespace: other, body: { metadata: { name: 'cm' } } });
    await core.deleteNamespace({ name: other });
    expect(
      await eventually('namespace gone', 90, async () =>
        (await statusOf(core.readNamespace({ name: other }))) === 404 ? true : undefined,
      ),
    ).toBe(true);
  });

  it("has the operator's spark-submit create the driver pod although admission warns about it", async () => {
    // Admitted (baseline) but warned about (restricted): kubectl prints the warning on stderr
    // beside the created pod's JSON. Before the fix the fake spark-submit parsed both as one.
    const warned = `it-k8s-real-warn-${suffix}`;
    await core.createNamespace({
      body: {
        metadata: {
          name: warned,
          labels: {
            'pod-security.kubernetes.io/enforce': 'baseline',
            'pod-security.kubernetes.io/warn': 'restricted',
          },
        },
      },
    });
    try {
      const apps = admin.makeApiClient(CustomObjectsApi);
      const resources = { cores: 1, memory: '512m', serviceAccount: 'default' };
      await apps.createNamespacedCustomObject({
        group: 'sparkoperator.k8s.io',
        version: 'v1beta2',
        namespace: warned,
        plural: 'sparkapplications',
        body: {
          apiVersion: 'sparkoperator.k8s.io/v1beta2',
          kind: 'SparkApplication',
          metadata: { name: 'warned' },
          spec: {
            type: 'Python',
            mode: 'cluster',
            image: 'apache/spark:4.0.1-python3',
            mainApplicationFile: 'local:///opt/icepack/job.py',
            sparkVersion: '4.0.1',
            driver: resources,
            executor: { ...resources, instances: 1 },
          },
        },
      });
      const driver = await eventually('driver pod created', 90, async () =>
        (await core.listNamespacedPod({ namespace: warned })).items.find(
          (p) => p.metadata?.labels?.['spark-role'] === 'driver',
        ),
      );
      expect(driver.spec?.containers[0]?.securityContext?.allowPrivilegeEscalation).not.toBe(false);
      const state = await eventually('application submitted', 60, async () => {
        const app = (await apps.getNamespacedCustomObject({
          group: 'sparkoperator.k8s.io',
          version: 'v1beta2',
          namespace: warned,
          plural: 'sparkapplications',
          name: 'warned',
        })) as { status?: { applicationState?: { state?: string } } };
        return app.status?.applicationState?.state;
      });
      expect(state).toBe('SUBMITTED');
    } finally {
      await core.deleteNamespace({ name: warned }).catch(() => undefined);
    }
  });
});
