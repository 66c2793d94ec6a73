import { existsSync } from 'node:fs';
import {
  ApiException,
  AuthenticationV1Api,
  CoreV1Api,
  KubeConfig,
  RbacAuthorizationV1Api,
} from '@kubernetes/client-node';
import { infraEnv } from '../infra/env.ts';
import type { KubeEnv } from '../infra/env.ts';

/** The local control plane is not there: the message says how to start it. */
export class ControlPlaneMissingError extends Error {
  override name = 'ControlPlaneMissingError';
}

/**
 * The admin KubeConfig (`system:masters`) of the real local control plane that
 * `deploy/local/k8s.sh` runs (the integration global setup starts it). For setting up and
 * checking; a service under test gets a ServiceAccount token instead
 * ({@link serviceAccountKubeConfig}).
 */
export function adminKubeConfig(kube: KubeEnv = infraEnv().kube): KubeConfig {
  if (!existsSync(kube.kubeconfig)) {
    throw new ControlPlaneMissingError(
      `no kubeconfig at ${kube.kubeconfig}: start the local control plane (bash deploy/local/k8s.sh up)`,
    );
  }
  const kc = new KubeConfig();
  kc.loadFromFile(kube.kubeconfig);
  return kc;
}

/** A KubeConfig for the same cluster as `base` that authenticates with `token`. */
export function kubeConfigWithToken(base: KubeConfig, token: string, user = 'token'): KubeConfig {
  const cluster = base.getCurrentCluster();
  if (cluster === null) throw new Error('the base KubeConfig has no current cluster');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name: user, token }],
    contexts: [{ name: user, cluster: cluster.name, user, namespace: 'default' }],
    currentContext: user,
  });
  return kc;
}

/** A Role or ClusterRole to bind. A ClusterRole with `namespace` is bound in that namespace only. */
export interface RoleRef {
  readonly kind: 'Role' | 'ClusterRole';
  readonly name: string;
  /** Required for a Role (its namespace); for a ClusterRole, limits the grant to this namespace. */
  readonly namespace?: string;
}

export interface ServiceAccountTokenOptions {
  /** Namespace of the ServiceAccount (created if missing, with the account). */
  readonly namespace: string;
  readonly name: string;
  /** What the account may do: each role gets a RoleBinding or ClusterRoleBinding to it. */
  readonly roles: readonly RoleRef[];
  /** Token lifetime (TokenRequest `expirationSeconds`). Default 3600; the minimum is 600. */
  readonly expirationSeconds?: number;
}

export interface ServiceAccountAccess {
  /** A KubeConfig that authenticates as the ServiceAccount: exactly the bound roles' rights. */
  readonly kubeConfig: KubeConfig;
  /** The bound token (TokenRequest API), for a service started as a separate process. */
  readonly token: string;
  /** `system:serviceaccount:<namespace>:<name>` */
  readonly username: string;
  /** Deletes the bindings this call created (ClusterRoleBindings are cluster-wide: do call it). */
  readonly cleanup: () => Promise<void>;
}

const codeOf = (error: unknown): number | undefined =>
  error instanceof ApiException ? error.code : undefined;

async function ignoreConflict(write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (error) {
    if (codeOf(error) !== 409) throw error;
  }
}

async function ignoreMissing(remove: () => Promise<unknown>): Promise<void> {
  try {
    await remove();
  } catch (error) {
    if (codeOf(error) !== 404) throw error;
  }
}

/**
 * A ServiceAccount whose rights are exactly the given roles, and a token for it from the
 * TokenRequest API, on the real API server: RBAC then allows or denies each request as it would
 * in a cluster. The roles themselves (e.g. rendered by `helm template` from the chart) are the
 * caller's to create. Binding names are `<account>-<role>`; ClusterRoleBindings are also
 * prefixed with the namespace, so parallel tests with unique namespaces never collide.
 */
export async function serviceAccountKubeConfig(
  admin: KubeConfig,
  options: ServiceAccountTokenOptions,
): Promise<ServiceAccountAccess> {
  const core = admin.makeApiClient(CoreV1Api);
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  const { namespace, name } = options;
  await ignoreConflict(() => core.createNamespace({ body: { metadata: { name: namespace } } }));
  await ignoreConflict(() =>
    core.createNamespacedServiceAccount({ namespace, body: { metadata: { name, namespace } } }),
  );
  const subjects = [{ kind: 'ServiceAccount', name, namespace }];
  const removals: (() => Promise<unknown>)[] = [];
  for (const role of options.roles) {
    const roleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: role.kind, name: role.name };
    const bindingNamespace = role.kind === 'Role' ? (role.namespace ?? namespace) : role.namespace;
    if (bindingNamespace === undefined) {
      const bindingName = `${namespace}-${name}-${role.name}`;
      await ignoreConflict(() =>
        rbac.createClusterRoleBinding({
          body: { metadata: { name: bindingName }, roleRef, subjects },
        }),
      );
      removals.push(() => rbac.deleteClusterRoleBinding({ name: bindingName }));
    } else {
      const bindingName = `${name}-${role.name}`;
      await ignoreConflict(() =>
        rbac.createNamespacedRoleBinding({
          namespace: bindingNamespace,
          body: { metadata: { name: bindingName, namespace: bindingNamespace }, roleRef, subjects },
        }),
      );
      removals.push(() =>
        rbac.deleteNamespacedRoleBinding({ name: bindingName, namespace: bindingNamespace }),
      );
    }
  }
  const request = await core.createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: options.expirationSeconds ?? 3600 } },
  });
  const token = request.status?.token;
  if (token === undefined || token === '') {
    throw new Error(`TokenRequest for ${namespace}/${name} returned no token`);
  }
  const username = `system:serviceaccount:${namespace}:${name}`;
  return {
    kubeConfig: kubeConfigWithToken(admin, token, `${namespace}-${name}`),
    token,
    username,
    cleanup: async () => {
      for (const remove of removals) await ignoreMissing(remove);
    },
  };
}

/** Who the API server says `kc` is (SelfSubjectReview): proves a token authenticates. */
export async function whoAmI(kc: KubeConfig): Promise<string> {
  const review = await kc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
  });
  return review.status?.userInfo?.username ?? '';
}
