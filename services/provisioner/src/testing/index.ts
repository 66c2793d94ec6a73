// What other packages' tests may use of the provisioner: making a group's Kubernetes objects
// exactly as the provisioner does, and the provisioner's rights as the chart grants them.
// Tests elsewhere import `@icepack/provisioner/testing`, never the service's files.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Catalog, ResourceGroup } from '@icepack/types';
import { KubeCluster } from '../adapters/kube-cluster.ts';
import { KUBERNETES_STEPS } from '../domain/group-record.ts';

export { chartProvisionerAccess, type ProvisionerAccess } from './real-cluster.ts';
// The Spark-driver Role of a group, whose rules the chart's RBAC allow-list must equal.
export { roleObject } from '../domain/kube-objects.ts';
// The provisioner in the test's process, with the in-memory cluster of the local mode.
export { startTestProvisioner, type ApiError } from './test-provisioner.ts';
export { LocalCluster } from '../adapters/local-cluster.ts';

/**
 * Makes `group`'s namespace and objects (quota, LimitRange, ConfigMap, accounts, RBAC) the
 * way the provisioner's Kubernetes adapter does, as installation `installation`, acting with
 * `kubeConfig`'s rights.
 */
export async function provisionGroup(
  kubeConfig: KubeConfig,
  installation: string,
  group: ResourceGroup,
  catalog: Catalog,
): Promise<void> {
  const cluster = new KubeCluster(kubeConfig, installation);
  for (const step of KUBERNETES_STEPS) await cluster.applyStep(step, group, catalog);
}
