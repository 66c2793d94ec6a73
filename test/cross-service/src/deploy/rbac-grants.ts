import type { KubeObject } from '@icepack/test/deploy';

/** One permission: a verb on a resource of an API group, optionally limited to one object name. */
export interface Grant {
  readonly apiGroup: string;
  readonly resource: string;
  readonly verb: string;
  /** `*` when the rule names no objects. */
  readonly resourceName: string;
  /** Where it applies: `*` (cluster-wide binding) or a namespace. */
  readonly scope: string;
}

interface PolicyRule {
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly verbs?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
}

interface Binding extends KubeObject {
  readonly roleRef: { readonly kind: string; readonly name: string };
  readonly subjects?: readonly {
    readonly kind: string;
    readonly name: string;
    readonly namespace?: string;
  }[];
}

export const grantKey = (g: Grant): string =>
  `${g.apiGroup || 'core'}/${g.resource}:${g.verb}${g.resourceName === '*' ? '' : `[${g.resourceName}]`}`;

function expand(rule: PolicyRule, scope: string): Grant[] {
  // A rule for non-resource URLs (/metrics, /healthz …) is a grant too: spell it out so an
  // allow-list without it rejects it.
  const urls = (rule.nonResourceURLs ?? []).flatMap((url) =>
    (rule.verbs ?? []).map((verb) => ({
      apiGroup: 'nonResourceURL',
      resource: url,
      verb,
      resourceName: '*',
      scope,
    })),
  );
  const names = rule.resourceNames?.length ? rule.resourceNames : ['*'];
  const grants = (rule.apiGroups ?? []).flatMap((apiGroup) =>
    (rule.resources ?? []).flatMap((resource) =>
      (rule.verbs ?? []).flatMap((verb) =>
        names.map((resourceName) => ({ apiGroup, resource, verb, resourceName, scope })),
      ),
    ),
  );
  return [...urls, ...grants];
}

/** An unresolvable grant: a binding to a role the chart does not define (e.g. `cluster-admin`). */
export class UnknownRoleError extends Error {
  override readonly name = 'UnknownRoleError';
}

/**
 * Every permission each ServiceAccount (`namespace/name`) gets from the rendered
 * (Cluster)RoleBindings. A binding to a role not rendered by the chart is an error: its
 * rights cannot be checked, so they count as too many.
 */
export function grantsByServiceAccount(objects: readonly KubeObject[]): Map<string, Grant[]> {
  const roles = new Map<string, PolicyRule[]>();
  for (const o of objects) {
    if (o.kind === 'ClusterRole')
      roles.set(`ClusterRole/${o.metadata.name}`, (o.rules as PolicyRule[] | undefined) ?? []);
    if (o.kind === 'Role')
      roles.set(
        `Role/${o.metadata.namespace}/${o.metadata.name}`,
        (o.rules as PolicyRule[] | undefined) ?? [],
      );
  }
  const result = new Map<string, Grant[]>();
  for (const o of objects) {
    if (o.kind !== 'ClusterRoleBinding' && o.kind !== 'RoleBinding') continue;
    const binding = o as Binding;
    const scope = o.kind === 'ClusterRoleBinding' ? '*' : (o.metadata.namespace ?? '');
    const key =
      binding.roleRef.kind === 'ClusterRole'
        ? `ClusterRole/${binding.roleRef.name}`
        : `Role/${o.metadata.namespace}/${binding.roleRef.name}`;
    const rules = roles.get(key);
    if (rules === undefined)
      throw new UnknownRoleError(
        `${o.kind} ${o.metadata.name} binds ${key}, which the chart does not define`,
      );
    for (const subject of binding.subjects ?? []) {
      const who =
        subject.kind === 'ServiceAccount'
          ? `${subject.namespace}/${subject.name}`
          : `${subject.kind}/${subject.name}`;
      result.set(who, [
        ...(result.get(who) ?? []),
        ...rules.flatMap((rule) => expand(rule, scope)),
      ]);
    }
  }
  return result;
}

/** The grants not on the allow-list (`core/pods:get`, `rbac.authorization.k8s.io/roles:bind[name]`). */
export function excessGrants(grants: readonly Grant[], allowed: ReadonlySet<string>): string[] {
  return [...new Set(grants.map(grantKey).filter((key) => !allowed.has(key)))].sort();
}
