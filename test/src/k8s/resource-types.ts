/** What the fake API server knows about one kind of object. */
export interface ResourceType {
  /** `""` for the core group. */
  readonly group: string;
  readonly version: string;
  /** URL segment, e.g. `configmaps`. */
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
  /** Has a `/status` subresource: writes to the object ignore `status`, writes to `/status` only change it. */
  readonly statusSubresource: boolean;
  /** Custom resources refuse an update without `metadata.resourceVersion` (core kinds allow it). */
  readonly requireResourceVersionOnUpdate: boolean;
  /** Names must be DNS-1123 labels (namespaces) rather than subdomains. */
  readonly nameIsLabel: boolean;
}

function core(plural: string, kind: string, extra: Partial<ResourceType> = {}): ResourceType {
  return {
    group: '',
    version: 'v1',
    plural,
    kind,
    namespaced: true,
    statusSubresource: false,
    requireResourceVersionOnUpdate: false,
    nameIsLabel: false,
    ...extra,
  };
}

function rbac(plural: string, kind: string): ResourceType {
  return { ...core(plural, kind), group: 'rbac.authorization.k8s.io' };
}

export const SPARK_GROUP = 'sparkoperator.k8s.io';

/** Every resource type the fake API server serves. */
export const RESOURCE_TYPES: readonly ResourceType[] = [
  core('namespaces', 'Namespace', {
    namespaced: false,
    statusSubresource: true,
    nameIsLabel: true,
  }),
  core('nodes', 'Node', { namespaced: false, statusSubresource: true }),
  core('resourcequotas', 'ResourceQuota', { statusSubresource: true }),
  core('limitranges', 'LimitRange'),
  core('configmaps', 'ConfigMap'),
  core('serviceaccounts', 'ServiceAccount'),
  rbac('roles', 'Role'),
  rbac('rolebindings', 'RoleBinding'),
  {
    group: SPARK_GROUP,
    version: 'v1beta2',
    plural: 'sparkapplications',
    kind: 'SparkApplication',
    namespaced: true,
    statusSubresource: true,
    requireResourceVersionOnUpdate: true,
    nameIsLabel: false,
  },
];

export function apiVersionOf(type: ResourceType): string {
  return type.group === '' ? type.version : `${type.group}/${type.version}`;
}

/** `configmaps` for core kinds, `sparkapplications.sparkoperator.k8s.io` otherwise (as in messages). */
export function qualifiedResource(type: ResourceType): string {
  return type.group === '' ? type.plural : `${type.plural}.${type.group}`;
}

export function findResourceType(
  group: string,
  version: string,
  plural: string,
): ResourceType | undefined {
  return RESOURCE_TYPES.find(
    (type) => type.group === group && type.version === version && type.plural === plural,
  );
}

export function resourceTypeOf(plural: string, group = ''): ResourceType {
  const type = RESOURCE_TYPES.find((t) => t.plural === plural && t.group === group);
  if (type === undefined) throw new Error(`fake API server: unknown resource ${plural}`);
  return type;
}
