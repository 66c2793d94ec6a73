import type { Catalog, ResourceGroup } from '@icepack/types';
import { namespaceForGroup } from '@icepack/types';
import { sparkDefaultsConf } from './spark-defaults.ts';

/** Labels on every object the provisioner owns; the capacity check finds quotas by them. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'icepack';
export const GROUP_LABEL = 'icepack.io/group';
export const CATALOG_LABEL = 'icepack.io/catalog';
export const ICEPACK_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;
/** See ownership.ts. */
export const INSTALLATION_ANNOTATION = 'icepack.io/installation';

/** Names of the objects inside a group's namespace. */
export const ObjectNames = {
  quota: 'icepack',
  limitRange: 'icepack',
  configMap: 'icepack-spark',
  serviceAccount: 'icepack-spark',
  role: 'icepack-spark-driver',
  roleBinding: 'icepack-spark-driver',
} as const;

export function labelsFor(group: ResourceGroup): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: MANAGED_BY,
    [GROUP_LABEL]: group.name,
    [CATALOG_LABEL]: group.catalog,
  };
}

function meta(group: ResourceGroup, name: string) {
  return { name, namespace: namespaceForGroup(group.name), labels: labelsFor(group) };
}

/**
 * Pod Security Admission for group namespaces: `restricted`, enforced. Spark runs under it
 * (the job image's user is uid 185, its pods need only emptyDir, configMap and projected
 * volumes and no capability), provided the driver and executor pods carry the restricted
 * security context; docs/provisioner.md gives the evidence and the fields. `warn` and `audit`
 * at the same level make a rejected pod's reason visible to `kubectl` and the audit log.
 */
export const POD_SECURITY_LABELS: Readonly<Record<string, string>> = {
  'pod-security.kubernetes.io/enforce': 'restricted',
  'pod-security.kubernetes.io/enforce-version': 'latest',
  'pod-security.kubernetes.io/warn': 'restricted',
  'pod-security.kubernetes.io/warn-version': 'latest',
  'pod-security.kubernetes.io/audit': 'restricted',
  'pod-security.kubernetes.io/audit-version': 'latest',
};

/**
 * The group's namespace: Icepack's labels, the Pod Security labels, and the annotation naming
 * the installation that owns it (see ownership.ts).
 */
export function namespaceObject(group: ResourceGroup, installation: string) {
  return {
    metadata: {
      name: namespaceForGroup(group.name),
      labels: { ...labelsFor(group), ...POD_SECURITY_LABELS },
      annotations: { [INSTALLATION_ANNOTATION]: installation },
    },
  };
}

/**
 * The group's budget. Pods: a job is a driver plus at most `maxExecutors` executors, and
 * `slots + smallSlots` jobs run at once (the small-task lane, ADR 0029). Small jobs are sized
 * smaller today, but the pod count does not depend on how sizing is tuned.
 */
export function resourceQuotaObject(group: ResourceGroup) {
  return {
    metadata: meta(group, ObjectNames.quota),
    spec: {
      hard: {
        'requests.cpu': group.cpu,
        'requests.memory': group.memory,
        'limits.memory': group.memory,
        pods: String((group.slots + group.smallSlots) * (1 + group.spark.maxExecutors)),
      },
    },
  };
}

/** Defaults for containers that state no resources (the quota requires memory limits) and a per-container ceiling. */
export function limitRangeObject(group: ResourceGroup) {
  return {
    metadata: meta(group, ObjectNames.limitRange),
    spec: {
      limits: [
        {
          type: 'Container',
          max: { cpu: group.cpu, memory: group.memory },
          defaultRequest: { cpu: '500m', memory: '512Mi' },
          _default: { memory: '1Gi' },
        },
      ],
    },
  };
}

/**
 * Catalog and Spark/Hadoop configuration for the jobs: secret references only, never values.
 * Throws `UnprocessableError` for a key or value with a line break (`sparkDefaultsConf`): the
 * configMap step then fails with that message and writes nothing.
 */
export function configMapObject(group: ResourceGroup, catalog: Catalog) {
  return {
    metadata: meta(group, ObjectNames.configMap),
    data: {
      'catalog.json': JSON.stringify(catalog, null, 2),
      'spark-defaults.conf': sparkDefaultsConf(group, catalog),
    },
  };
}

export function serviceAccountObject(group: ResourceGroup) {
  return { metadata: meta(group, ObjectNames.serviceAccount) };
}

/** What a Spark driver does in its own namespace: executor pods, its service, conf maps, volumes. */
export function roleObject(group: ResourceGroup) {
  const all = ['create', 'get', 'list', 'watch', 'update', 'patch', 'delete', 'deletecollection'];
  return {
    metadata: meta(group, ObjectNames.role),
    rules: [
      { apiGroups: [''], resources: ['pods'], verbs: all },
      {
        apiGroups: [''],
        resources: ['services'],
        verbs: ['create', 'get', 'list', 'watch', 'delete', 'deletecollection'],
      },
      { apiGroups: [''], resources: ['configmaps'], verbs: all },
      {
        apiGroups: [''],
        resources: ['persistentvolumeclaims'],
        verbs: ['create', 'get', 'list', 'watch', 'delete', 'deletecollection'],
      },
    ],
  };
}

export function roleBindingObject(group: ResourceGroup) {
  return {
    metadata: meta(group, ObjectNames.roleBinding),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: ObjectNames.role },
    subjects: [
      {
        kind: 'ServiceAccount',
        name: ObjectNames.serviceAccount,
        namespace: namespaceForGroup(group.name),
      },
    ],
  };
}
