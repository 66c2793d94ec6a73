import { writeFile } from 'node:fs/promises';
import {
  ApiException,
  CoreV1Api,
  RbacAuthorizationV1Api,
  type KubeConfig,
  type V1PolicyRule,
} from '@kubernetes/client-node';
import { ofKind, renderChart } from '../deploy/rendered-chart.ts';
import { serviceAccountKubeConfig, type ServiceAccountAccess } from './control-plane.ts';

/** The services the chart gives Kubernetes rights (a ClusterRole `icepack-<service>` each). */
export type ChartService = 'provisioner' | 'dispatcher';

export interface ChartAccessOptions {
  /** Unique per test run: names the ClusterRole copy and the account's namespace. */
  readonly suffix: string;
  /**
   * Bind the role in this namespace only (the chart's `rbac.dispatcher.namespaces` form: a
   * RoleBinding there; the namespace must exist). Default: cluster-wide (ClusterRoleBinding).
   */
  readonly namespace?: string;
  /** Chart values: deploy/checks/values/<scenario>.yaml; `default` for none. */
  readonly scenario?: string;
}

export interface ChartAccess extends ServiceAccountAccess {
  /** Name the rendered ClusterRole was created under (unique per test run). */
  readonly clusterRole: string;
}

const ignoreMissing = async (call: Promise<unknown>): Promise<void> => {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof ApiException && error.code === 404)) throw error;
  }
};

/**
 * A service's rights exactly as the chart grants them: `helm template` renders the chart, the
 * service's ClusterRole is created on the real API server under a unique name, and a
 * ServiceAccount token (TokenRequest) is bound to it alone. A right the code needs and the
 * chart lacks is a 403 in the test; so is one a test proves the service must not have.
 * `cleanup()` removes the binding, the role copy and the account's namespace.
 */
export async function chartServiceAccess(
  admin: KubeConfig,
  service: ChartService,
  options: ChartAccessOptions,
): Promise<ChartAccess> {
  const scenario = options.scenario ?? 'default';
  const rendered = ofKind(renderChart(scenario), 'ClusterRole').find(
    (role) => role.metadata.name === `icepack-${service}`,
  );
  if (rendered === undefined)
    throw new Error(`the chart (${scenario}) renders no ${service} ClusterRole`);
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  const core = admin.makeApiClient(CoreV1Api);
  const clusterRole = `icepack-${service}-${options.suffix}`;
  await rbac.createClusterRole({
    body: { metadata: { name: clusterRole }, rules: rendered.rules as V1PolicyRule[] },
  });
  const accountNamespace = `${service}-sa-${options.suffix}`;
  const access = await serviceAccountKubeConfig(admin, {
    namespace: accountNamespace,
    name: `icepack-${service}`,
    roles: [
      {
        kind: 'ClusterRole',
        name: clusterRole,
        ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
      },
    ],
  });
  return {
    ...access,
    clusterRole,
    async cleanup() {
      await access.cleanup();
      await ignoreMissing(rbac.deleteClusterRole({ name: clusterRole }));
      await ignoreMissing(core.deleteNamespace({ name: accountNamespace }));
    },
  };
}

/**
 * Writes `kc` as a kubeconfig file, for a service started as its own process (`KUBECONFIG`):
 * the cluster (with its CA) and the user's token, nothing of the admin's.
 */
export async function writeKubeConfig(kc: KubeConfig, path: string): Promise<void> {
  // exportConfig() is JSON, which is YAML; the file holds a bearer token: owner only.
  await writeFile(path, kc.exportConfig(), { mode: 0o600 });
}
