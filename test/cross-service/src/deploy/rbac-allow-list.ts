/**
 * What each Icepack service may be granted in Kubernetes (issue 9), as
 * `<apiGroup|core>/<resource>:<verb>[<resourceName>]`. Anything the chart grants beyond these
 * fails test/cross-service/src/deploy/rbac.test.ts. docs/deploy.md explains every line.
 */

const keys = (apiGroup: string, resources: readonly string[], verbs: readonly string[]): string[] =>
  resources.flatMap((r) => verbs.map((v) => `${apiGroup}/${r}:${v}`));

const RBAC = 'rbac.authorization.k8s.io';
const SPARK = 'sparkoperator.k8s.io';

/**
 * The rights of the Role the provisioner creates for Spark drivers in each group namespace
 * (services/provisioner: roleObject). Kubernetes only lets the provisioner create that Role if
 * it holds these rights itself, unless it has `escalate` on roles.
 */
export const SPARK_DRIVER_RIGHTS: readonly string[] = [
  ...keys(
    'core',
    ['pods', 'configmaps'],
    ['create', 'get', 'list', 'watch', 'update', 'patch', 'delete', 'deletecollection'],
  ),
  ...keys(
    'core',
    ['services', 'persistentvolumeclaims'],
    ['create', 'get', 'list', 'watch', 'delete', 'deletecollection'],
  ),
];

/** The provisioner's own work: namespaces, quotas, limit ranges, config maps, service accounts, roles, role bindings; node capacity. */
const PROVISIONER_BASE: readonly string[] = [
  ...keys('core', ['namespaces'], ['get', 'create', 'update', 'delete']),
  ...keys('core', ['resourcequotas'], ['get', 'list', 'create', 'update']),
  ...keys('core', ['limitranges'], ['get', 'create', 'update']),
  ...keys('core', ['configmaps'], ['get', 'create', 'update']),
  ...keys('core', ['serviceaccounts'], ['get', 'create']),
  ...keys(RBAC, ['roles'], ['get', 'create', 'update']),
  ...keys(RBAC, ['rolebindings'], ['get', 'create', 'update', 'delete']),
  ...keys('core', ['nodes'], ['get', 'list']),
  // Beyond the list, because the provisioner's code does it: a group deleted while
  // its jobs outlive the drain timeout has its SparkApplications cancelled.
  ...keys(SPARK, ['sparkapplications'], ['list', 'deletecollection']),
];

export const ALLOWED = {
  /** rbac.provisioner.driverRights=hold (default): holds the driver's rights itself. */
  provisionerHold: new Set([...PROVISIONER_BASE, ...SPARK_DRIVER_RIGHTS]),
  /** rbac.provisioner.driverRights=escalate: may write roles beyond its rights, bind only the driver role. */
  provisionerEscalate: new Set([
    ...PROVISIONER_BASE,
    `${RBAC}/roles:escalate`,
    `${RBAC}/roles:bind[icepack-spark-driver]`,
  ]),
  dispatcher: new Set([
    ...keys(SPARK, ['sparkapplications'], ['create', 'get', 'list', 'watch', 'delete']),
    // watch: the quota room comes from a watch-fed cache, not a list per launch.
    ...keys('core', ['resourcequotas'], ['get', 'list', 'watch']),
    // get: a finished run's result is its driver pod's termination message.
    ...keys('core', ['pods'], ['get']),
  ]),
  metadataScanner: new Set<string>(),
  planner: new Set<string>(),
} as const;
