import type { CheckResult } from '@icepack/runtime';
import type { Catalog, ResourceGroup } from '@icepack/types';
import { namespaceForGroup, parseCpuMillicores, parseMemoryBytes } from '@icepack/types';
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
} from '@kubernetes/client-node';
import type { KubeConfig, V1Namespace } from '@kubernetes/client-node';
import type { Amount, Reservation } from '../domain/capacity.ts';
import { amountOf, sum } from '../domain/capacity.ts';
import { GroupStep, ProvisionerMode } from '../domain/group-record.ts';
import {
  configMapObject,
  GROUP_LABEL,
  ICEPACK_SELECTOR,
  limitRangeObject,
  namespaceObject,
  resourceQuotaObject,
  roleBindingObject,
  roleObject,
  serviceAccountObject,
} from '../domain/kube-objects.ts';
import { ForeignNamespaceError, Ownership, ownershipOf } from '../domain/ownership.ts';
import type { ClusterPort } from './cluster-port.ts';
import { holdsJson, sameJson, sameQuantities } from './same-json.ts';

const SPARK = { group: 'sparkoperator.k8s.io', version: 'v1beta2', plural: 'sparkapplications' };

function isNotFound(error: unknown): boolean {
  return error instanceof ApiException && error.code === 404;
}

function isAlreadyExists(error: unknown): boolean {
  return error instanceof ApiException && error.code === 409;
}

/** Reads an object; undefined when it does not exist. */
async function readOrUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/**
 * Creates the object if missing, else replaces it when `differs` says so. A create that
 * loses a race (409) or a replace that hits a newer version (409) is retried once from a
 * fresh read: every step stays idempotent under concurrent reconciles.
 */
async function ensure<T extends { metadata?: { resourceVersion?: string } }>(ops: {
  read: () => Promise<T>;
  create: () => Promise<unknown>;
  differs: (current: T) => boolean;
  replace: (current: T) => Promise<unknown>;
}): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      const current = await readOrUndefined(ops.read);
      if (current === undefined) await ops.create();
      else if (ops.differs(current)) await ops.replace(current);
      return;
    } catch (error) {
      if (attempt < 1 && isAlreadyExists(error)) continue;
      throw error;
    }
  }
}

/**
 * The group's namespace and its objects through the Kubernetes API (@kubernetes/client-node 2.x).
 * Only namespaces this installation owns (ownership.ts) are changed, emptied or deleted.
 */
export class KubeCluster implements ClusterPort {
  readonly mode = ProvisionerMode.kubernetes;
  readonly where = 'the cluster';
  readonly #core: CoreV1Api;
  readonly #rbac: RbacAuthorizationV1Api;
  readonly #custom: CustomObjectsApi;
  readonly #installation: string;

  /** `installation`: this installation's id (`ICEPACK_INSTALLATION_ID`). */
  constructor(kubeConfig: KubeConfig, installation: string) {
    this.#installation = installation;
    this.#core = kubeConfig.makeApiClient(CoreV1Api);
    this.#rbac = kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    this.#custom = kubeConfig.makeApiClient(CustomObjectsApi);
  }

  async allocatable(): Promise<Amount> {
    const nodes = await this.#core.listNode();
    return sum(
      nodes.items
        .filter((node) => node.spec?.unschedulable !== true)
        .map((node) => {
          const allocatable = node.status?.allocatable ?? {};
          return amountOf({ cpu: allocatable.cpu ?? '0', memory: allocatable.memory ?? '0' });
        }),
    );
  }

  async reservations(): Promise<Reservation[]> {
    const quotas = await this.#core.listResourceQuotaForAllNamespaces({
      labelSelector: ICEPACK_SELECTOR,
    });
    return quotas.items.map((quota) => {
      const hard = quota.spec?.hard ?? {};
      return {
        holder: quota.metadata?.labels?.[GROUP_LABEL] ?? quota.metadata?.namespace ?? '',
        cpuMillis: parseCpuMillicores(hard['requests.cpu'] ?? '0'),
        memoryBytes: parseMemoryBytes(hard['requests.memory'] ?? '0'),
      };
    });
  }

  async foreignNamespace(group: ResourceGroup): Promise<ForeignNamespaceError | undefined> {
    const name = namespaceForGroup(group.name);
    const ns = await readOrUndefined(() => this.#core.readNamespace({ name }));
    return ns === undefined ? undefined : this.#refusal(ns);
  }

  #refusal(ns: V1Namespace): ForeignNamespaceError | undefined {
    const ownership = ownershipOf(ns.metadata, this.#installation);
    return ownership.kind === Ownership.foreign
      ? new ForeignNamespaceError(ns.metadata?.name ?? '', this.#installation, ownership.reason)
      : undefined;
  }

  /** Throws ForeignNamespaceError unless this installation owns the namespace. */
  #assertOwned(ns: V1Namespace): void {
    const refusal = this.#refusal(ns);
    if (refusal !== undefined) throw refusal;
  }

  async applyStep(step: GroupStep, group: ResourceGroup, catalog: Catalog): Promise<void> {
    const namespace = namespaceForGroup(group.name);
    const core = this.#core;
    const rbac = this.#rbac;
    switch (step) {
      case GroupStep.namespace: {
        const desired = namespaceObject(group, this.#installation);
        await ensure({
          read: () => core.readNamespace({ name: namespace }),
          create: () => core.createNamespace({ body: desired }),
          // Someone else's namespace is refused here, before anything is written into it.
          differs: (ns) => {
            this.#assertOwned(ns);
            return Object.entries(desired.metadata.labels).some(
              ([k, v]) => ns.metadata?.labels?.[k] !== v,
            );
          },
          replace: (ns) =>
            core.replaceNamespace({
              name: namespace,
              body: {
                ...ns,
                metadata: {
                  ...ns.metadata,
                  labels: { ...ns.metadata?.labels, ...desired.metadata.labels },
                },
              },
            }),
        });
        return;
      }
      case GroupStep.resourceQuota: {
        const desired = resourceQuotaObject(group);
        const name = desired.metadata.name;
        await ensure({
          read: () => core.readNamespacedResourceQuota({ name, namespace }),
          create: () => core.createNamespacedResourceQuota({ namespace, body: desired }),
          differs: (q) =>
            !sameQuantities(q.spec?.hard ?? {}, desired.spec.hard) ||
            !sameJson(q.metadata?.labels, desired.metadata.labels),
          replace: (q) =>
            core.replaceNamespacedResourceQuota({
              name,
              namespace,
              body: {
                ...q,
                metadata: { ...q.metadata, labels: desired.metadata.labels },
                spec: { ...q.spec, hard: desired.spec.hard },
              },
            }),
        });
        return;
      }
      case GroupStep.limitRange: {
        const desired = limitRangeObject(group);
        const name = desired.metadata.name;
        await ensure({
          read: () => core.readNamespacedLimitRange({ name, namespace }),
          create: () => core.createNamespacedLimitRange({ namespace, body: desired }),
          // The API server defaults `default` from `max` (cpu): not drift, or every pass writes.
          differs: (l) => !holdsJson(l.spec, desired.spec),
          replace: (l) =>
            core.replaceNamespacedLimitRange({
              name,
              namespace,
              body: { ...l, spec: desired.spec },
            }),
        });
        return;
      }
      case GroupStep.configMap: {
        const desired = configMapObject(group, catalog);
        const name = desired.metadata.name;
        await ensure({
          read: () => core.readNamespacedConfigMap({ name, namespace }),
          create: () => core.createNamespacedConfigMap({ namespace, body: desired }),
          differs: (c) => !sameJson(c.data, desired.data),
          replace: (c) =>
            core.replaceNamespacedConfigMap({
              name,
              namespace,
              body: { ...c, data: desired.data },
            }),
        });
        return;
      }
      case GroupStep.serviceAccount: {
        const desired = serviceAccountObject(group);
        await ensure({
          read: () => core.readNamespacedServiceAccount({ name: desired.metadata.name, namespace }),
          create: () => core.createNamespacedServiceAccount({ namespace, body: desired }),
          differs: () => false,
          replace: () => Promise.resolve(),
        });
        return;
      }
      case GroupStep.role: {
        const desired = roleObject(group);
        const name = desired.metadata.name;
        await ensure({
          read: () => rbac.readNamespacedRole({ name, namespace }),
          create: () => rbac.createNamespacedRole({ namespace, body: desired }),
          differs: (r) => !sameJson(r.rules, desired.rules),
          replace: (r) =>
            rbac.replaceNamespacedRole({ name, namespace, body: { ...r, rules: desired.rules } }),
        });
        return;
      }
      case GroupStep.roleBinding: {
        const desired = roleBindingObject(group);
        const name = desired.metadata.name;
        await ensure({
          read: () => rbac.readNamespacedRoleBinding({ name, namespace }),
          create: () => rbac.createNamespacedRoleBinding({ namespace, body: desired }),
          differs: (b) =>
            !sameJson(b.roleRef, desired.roleRef) || !sameJson(b.subjects, desired.subjects),
          // roleRef is immutable: a binding pointing elsewhere is replaced by a new one.
          replace: async (b) => {
            if (!sameJson(b.roleRef, desired.roleRef)) {
              await rbac.deleteNamespacedRoleBinding({ name, namespace });
              await rbac.createNamespacedRoleBinding({ namespace, body: desired });
            } else {
              await rbac.replaceNamespacedRoleBinding({
                name,
                namespace,
                body: { ...b, subjects: desired.subjects },
              });
            }
          },
        });
        return;
      }
      case GroupStep.persisted:
      case GroupStep.ready:
      case GroupStep.bindingPublished:
        return;
    }
  }

  async cancelJobs(group: ResourceGroup): Promise<number> {
    const namespace = namespaceForGroup(group.name);
    // Jobs in a namespace that is not this installation's are not Icepack's to cancel.
    const ns = await readOrUndefined(() => this.#core.readNamespace({ name: namespace }));
    if (ns === undefined || this.#refusal(ns) !== undefined) return 0;
    const list = (await readOrUndefined(() =>
      this.#custom.listNamespacedCustomObject({ ...SPARK, namespace }),
    )) as { items?: unknown[] } | undefined;
    const count = list?.items?.length ?? 0;
    if (count > 0)
      await this.#custom.deleteCollectionNamespacedCustomObject({ ...SPARK, namespace });
    return count;
  }

  async deleteNamespace(group: ResourceGroup): Promise<boolean> {
    const name = namespaceForGroup(group.name);
    const ns = await readOrUndefined(() => this.#core.readNamespace({ name }));
    if (ns === undefined) return true;
    this.#assertOwned(ns);
    // Already terminating: a second delete would only be refused (409); wait for it to go.
    if (ns.metadata?.deletionTimestamp !== undefined) return false;
    try {
      // The precondition: a namespace re-created by someone else since the read is not deleted.
      await this.#core.deleteNamespace({
        name,
        body: { preconditions: { uid: ns.metadata?.uid } },
      });
    } catch (error) {
      if (isNotFound(error)) return true;
      throw error;
    }
    // A real namespace terminates asynchronously; the next pass sees it gone.
    return (await readOrUndefined(() => this.#core.readNamespace({ name }))) === undefined;
  }

  async health(): Promise<CheckResult> {
    try {
      await this.#core.listNode({ limit: 1 });
      return { ok: true };
    } catch (error) {
      return {
        ok: false,
        detail:
          error instanceof ApiException
            ? `API server answered ${error.code}`
            : (error as Error).message,
      };
    }
  }
}
