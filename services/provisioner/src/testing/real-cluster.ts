import { randomUUID } from 'node:crypto';
import { adminKubeConfig, serviceAccountKubeConfig } from '@icepack/test';
import type { KubeEnv } from '@icepack/test';
import { ofKind, renderChart } from '@icepack/test/deploy';
import {
  ApiException,
  CoreV1Api,
  RbacAuthorizationV1Api,
  type KubeConfig,
  type V1PolicyRule,
} from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { ICEPACK_SELECTOR, INSTALLATION_ANNOTATION } from '../domain/kube-objects.ts';

/** Runs `call` and answers the API server's status code (200 when it succeeded). */
export async function statusOf(call: Promise<unknown>): Promise<number> {
  try {
    await call;
    return 200;
  } catch (error) {
    if (error instanceof ApiException) return error.code;
    throw error;
  }
}

/** The API server's message of a refused call. */
export async function refusal(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ApiException) {
      // A Status object, as text or parsed: its message says why.
      let body = error.body as unknown;
      if (typeof body === 'string') {
        try {
          body = JSON.parse(body) as unknown;
        } catch {
          return body as string;
        }
      }
      const message = (body as { message?: unknown } | null)?.message;
      return typeof message === 'string' ? message : JSON.stringify(body);
    }
    throw error;
  }
  throw new Error('the call was not refused');
}

export interface ProvisionerAccess {
  /** Authenticates as the provisioner's ServiceAccount: the chart's ClusterRole, nothing else. */
  readonly kubeConfig: KubeConfig;
  /** Name the rendered ClusterRole was created under (unique per test run). */
  readonly clusterRole: string;
  /** Removes the ClusterRole, its binding and the ServiceAccount's namespace. */
  cleanup(): Promise<void>;
}

/**
 * The provisioner's rights exactly as the chart grants them: `helm template` renders the chart
 * (`scenario` = deploy/checks/values/<name>.yaml, `default` for none), its provisioner
 * ClusterRole is created on the real API server under a unique name, and a ServiceAccount
 * token (TokenRequest) is bound to it alone. A right the code needs and the chart lacks is a
 * 403 in the test; so is one a test proves the provisioner must not have.
 */
export async function chartProvisionerAccess(
  admin: KubeConfig,
  suffix: string,
  scenario = 'default',
): Promise<ProvisionerAccess> {
  const rendered = ofKind(renderChart(scenario), 'ClusterRole').find(
    (role) => role.metadata.name === 'icepack-provisioner',
  );
  if (rendered === undefined)
    throw new Error(`the chart (${scenario}) renders no provisioner ClusterRole`);
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  const core = admin.makeApiClient(CoreV1Api);
  const clusterRole = `icepack-provisioner-${suffix}`;
  await rbac.createClusterRole({
    body: { metadata: { name: clusterRole }, rules: rendered.rules as V1PolicyRule[] },
  });
  const namespace = `provisioner-sa-${suffix}`;
  const access = await serviceAccountKubeConfig(admin, {
    namespace,
    name: 'icepack-provisioner',
    roles: [{ kind: 'ClusterRole', name: clusterRole }],
  });
  return {
    kubeConfig: access.kubeConfig,
    clusterRole,
    async cleanup() {
      await access.cleanup();
      await statusOf(rbac.deleteClusterRole({ name: clusterRole }));
      await statusOf(core.deleteNamespace({ name: namespace }));
    },
  };
}

/**
 * Deletes the group namespaces an installation left (tests share one cluster: a namespace
 * left behind would hold its quota against every later capacity check).
 */
export async function deleteInstallationNamespaces(
  admin: KubeConfig,
  installation: string,
): Promise<void> {
  const core = admin.makeApiClient(CoreV1Api);
  const namespaces = await core.listNamespace({ labelSelector: ICEPACK_SELECTOR });
  for (const ns of namespaces.items) {
    const name = ns.metadata?.name;
    if (name !== undefined && ns.metadata?.annotations?.[INSTALLATION_ANNOTATION] === installation)
      await statusOf(core.deleteNamespace({ name }));
  }
}

export interface RealClusterSuite {
  /** `system:masters`: sets up and checks what the provisioner did. */
  readonly admin: KubeConfig;
  readonly core: CoreV1Api;
  readonly rbac: RbacAuthorizationV1Api;
  /** The provisioner's ServiceAccount, bound to the chart's ClusterRole only. */
  readonly access: ProvisionerAccess;
  /** Fresh per test: names in Kafka, Redis and the cluster never meet other runs'. */
  readonly suffix: string;
  /** This test's ICEPACK_INSTALLATION_ID (`test-<suffix>`). */
  readonly installation: string;
  /** Creates a namespace as someone else would (deleted after the test). */
  foreign(name: string, metadata?: object): Promise<void>;
  /** true once the namespace does not exist (undefined before: for `until`). */
  gone(name: string): Promise<true | undefined>;
}

/**
 * Registers the hooks of a test file on the real local control plane (shared with other
 * tests): the chart's provisioner rights once per file; per test a fresh suffix and
 * installation id, and afterwards the deletion of every namespace the test's installation
 * made or the test made as someone else — a namespace left behind would hold its quota
 * against every later capacity check. `scenario`: the chart values (`escalate` …).
 */
export function realClusterSuite(kube: KubeEnv, scenario = 'default'): RealClusterSuite {
  const state: {
    admin?: KubeConfig;
    access?: ProvisionerAccess;
    suffix: string;
    foreign: string[];
  } = { suffix: '', foreign: [] };
  const admin = () => {
    if (state.admin === undefined) throw new Error('realClusterSuite: used outside a test');
    return state.admin;
  };
  beforeAll(async () => {
    state.admin = adminKubeConfig(kube);
    state.access = await chartProvisionerAccess(state.admin, randomUUID().slice(0, 8), scenario);
  });
  afterAll(async () => {
    await state.access?.cleanup();
  });
  beforeEach(() => {
    state.suffix = randomUUID().slice(0, 8);
  });
  afterEach(async () => {
    await deleteInstallationNamespaces(admin(), `test-${state.suffix}`);
    const core = admin().makeApiClient(CoreV1Api);
    for (const name of state.foreign.splice(0)) await statusOf(core.deleteNamespace({ name }));
  });
  return {
    get admin() {
      return admin();
    },
    get core() {
      return admin().makeApiClient(CoreV1Api);
    },
    get rbac() {
      return admin().makeApiClient(RbacAuthorizationV1Api);
    },
    get access() {
      if (state.access === undefined) throw new Error('realClusterSuite: used outside a test');
      return state.access;
    },
    get suffix() {
      return state.suffix;
    },
    get installation() {
      return `test-${state.suffix}`;
    },
    async foreign(name, metadata = {}) {
      state.foreign.push(name);
      await admin()
        .makeApiClient(CoreV1Api)
        .createNamespace({ body: { metadata: { name, ...metadata } } });
    },
    async gone(name) {
      const status = await statusOf(admin().makeApiClient(CoreV1Api).readNamespace({ name }));
      return status === 404 ? true : undefined;
    },
  };
}
