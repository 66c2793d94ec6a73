import { randomUUID } from 'node:crypto';
import { adminKubeConfig, chartServiceAccess } from '@icepack/test';
import type { ChartAccess, KubeEnv } from '@icepack/test';
import {
  ApiException,
  CoreV1Api,
  RbacAuthorizationV1Api,
  type KubeConfig,
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

export type ProvisionerAccess = ChartAccess;

/**
 * The provisioner's rights exactly as the chart grants them (`scenario` =
 * deploy/checks/values/<name>.yaml, `default` for none): its ClusterRole, bound cluster-wide,
 * and a ServiceAccount token bound to it alone (see `chartServiceAccess`).
 */
export function chartProvisionerAccess(
  admin: KubeConfig,
  suffix: string,
  scenario = 'default',
): Promise<ProvisionerAccess> {
  return chartServiceAccess(admin, 'provisioner', { suffix, scenario });
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
