import { ApiException, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import {
  adminKubeConfig,
  chartServiceAccess,
  startKubeletStandin,
  type KubeEnv,
  type KubeletStandin,
  type ServiceAccountAccess,
} from '@icepack/test';
import { parseResourceGroup, type Binding, type Catalog } from '@icepack/types';
// The provisioner's own Kubernetes adapter makes the group's namespace and objects, so the runs
// land where production runs land.
import { chartProvisionerAccess, provisionGroup } from '@icepack/provisioner/testing';

/** A resource group on the real local control plane, and the dispatcher's access to it. */
export interface RealGroup {
  /** `system:masters`, for setting up and checking. */
  readonly admin: KubeConfig;
  readonly namespace: string;
  /** The dispatcher's ServiceAccount: the chart's dispatcher ClusterRole, bound in `namespace` only. */
  readonly dispatcher: ServiceAccountAccess;
  /** Runs the namespace's driver pods with the local Spark. */
  readonly kubelet: KubeletStandin;
  /** Stops the stand-in and deletes what was made (namespaces, role, bindings). */
  cleanup(): Promise<void>;
}

export interface RealGroupOptions {
  readonly kube: KubeEnv;
  readonly binding: Binding;
  readonly catalog: Catalog;
  readonly sparkJars: string;
  /** Unique per test run: names the installation, the ClusterRole and the account's namespace. */
  readonly suffix: string;
}

async function ignoreMissing(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof ApiException && error.code === 404)) throw error;
  }
}

/**
 * The dispatcher's rights exactly as the chart grants them: the ClusterRole `helm template`
 * renders, created under a unique name and bound in `namespace` only (the chart's
 * `rbac.dispatcher.namespaces` form), and a ServiceAccount token bound to it alone.
 * `cleanup()` also removes the role and the account's namespace.
 */
export function chartDispatcherAccess(
  admin: KubeConfig,
  namespace: string,
  suffix: string,
): Promise<ServiceAccountAccess> {
  return chartServiceAccess(admin, 'dispatcher', { suffix, namespace });
}

/**
 * The binding's group as production has it: its namespace, quota, LimitRange, ConfigMap and
 * driver account made by the provisioner's adapter (Pod Security `restricted`) acting with a
 * token bound to exactly the provisioner ClusterRole the chart renders; the dispatcher
 * acting with a ServiceAccount token bound to exactly the ClusterRole `helm template` renders
 * (the chart's `rbac.dispatcher.namespaces` form: a RoleBinding in the group's namespace); the
 * kubelet stand-in running the driver pods the real Spark operator has created there.
 */
export async function realGroup(options: RealGroupOptions): Promise<RealGroup> {
  const { binding, catalog, suffix } = options;
  const admin = adminKubeConfig(options.kube);
  const core = admin.makeApiClient(CoreV1Api);
  const group = parseResourceGroup({
    name: binding.group,
    catalog: binding.catalog,
    cpu: binding.cpu,
    memory: binding.memory,
    slots: binding.slots,
  });
  // The provisioner acts with its own chart-bound token, as it does when installed.
  const provisionerAccess = await chartProvisionerAccess(admin, suffix);
  await provisionGroup(provisionerAccess.kubeConfig, `dispatch-${suffix}`, group, catalog);

  const dispatcher = await chartDispatcherAccess(admin, binding.namespace, suffix);
  const kubelet = await startKubeletStandin({
    namespaces: [binding.namespace],
    sparkJars: options.sparkJars,
  });
  return {
    admin,
    namespace: binding.namespace,
    dispatcher,
    kubelet,
    async cleanup() {
      await kubelet.stop();
      await dispatcher.cleanup();
      await provisionerAccess.cleanup();
      await ignoreMissing(core.deleteNamespace({ name: binding.namespace }));
    },
  };
}
