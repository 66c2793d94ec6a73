import { roleObject } from '@icepack/provisioner/testing';
import { RELEASE_NAMESPACE, ofKind, renderChart, type KubeObject } from '@icepack/test/deploy';
import { parseResourceGroup } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { ALLOWED, SPARK_DRIVER_RIGHTS } from './rbac-allow-list.ts';
import { UnknownRoleError, excessGrants, grantKey, grantsByServiceAccount } from './rbac-grants.ts';

const account = (service: string) => `${RELEASE_NAMESPACE}/icepack-${service}`;
const SERVICES = ['provisioner', 'metadata-scanner', 'planner', 'dispatcher'] as const;

function allowListFor(service: string, scenario: string): ReadonlySet<string> {
  switch (service) {
    case 'provisioner':
      return scenario === 'escalate' ? ALLOWED.provisionerEscalate : ALLOWED.provisionerHold;
    case 'dispatcher':
      return ALLOWED.dispatcher;
    default:
      return new Set();
  }
}

function automount(objects: readonly KubeObject[], service: string) {
  const name = `icepack-${service}`;
  const sa = ofKind(objects, 'ServiceAccount').find((o) => o.metadata.name === name);
  const deployment = ofKind(objects, 'Deployment').find((o) => o.metadata.name === name) as
    | {
        spec: {
          template: {
            spec: { automountServiceAccountToken?: boolean; serviceAccountName?: string };
          };
        };
      }
    | undefined;
  return {
    serviceAccount: sa?.automountServiceAccountToken as boolean | undefined,
    pod: deployment?.spec.template.spec.automountServiceAccountToken,
    podAccount: deployment?.spec.template.spec.serviceAccountName,
  };
}

describe('the chart grants each service no more than its allow-list', () => {
  for (const scenario of ['default', 'full', 'escalate', 'local']) {
    it(`with values "${scenario}"`, () => {
      const objects = renderChart(scenario);
      const grants = grantsByServiceAccount(objects);
      // Nobody but the four service accounts is bound to anything.
      expect([...grants.keys()].filter((who) => !SERVICES.some((s) => account(s) === who))).toEqual(
        [],
      );
      for (const service of SERVICES) {
        expect(
          excessGrants(grants.get(account(service)) ?? [], allowListFor(service, scenario)),
          service,
        ).toEqual([]);
      }
      // metadata-scanner and planner never talk to the API server: no binding, no token.
      for (const service of ['metadata-scanner', 'planner']) {
        expect(grants.get(account(service)) ?? [], service).toEqual([]);
        expect(automount(objects, service), service).toEqual({
          serviceAccount: false,
          pod: false,
          podAccount: `icepack-${service}`,
        });
      }
    });
  }

  it('lets the provisioner create the Spark-driver Role: it holds every right that Role grants, cluster-wide', () => {
    const held = new Set(
      (grantsByServiceAccount(renderChart()).get(account('provisioner')) ?? [])
        .filter((g) => g.scope === '*')
        .map(grantKey),
    );
    expect(SPARK_DRIVER_RIGHTS.filter((right) => !held.has(right))).toEqual([]);
  });

  it('with driverRights=escalate, grants escalate on roles and bind on the driver role only, and none of its rights', () => {
    const keys = new Set(
      (grantsByServiceAccount(renderChart('escalate')).get(account('provisioner')) ?? []).map(
        grantKey,
      ),
    );
    expect(keys.has('rbac.authorization.k8s.io/roles:escalate')).toBe(true);
    expect(keys.has('rbac.authorization.k8s.io/roles:bind[icepack-spark-driver]')).toBe(true);
    expect(keys.has('rbac.authorization.k8s.io/roles:bind')).toBe(false);
    expect(keys.has('core/pods:create')).toBe(false);
  });

  it('binds the dispatcher only in the listed namespaces when rbac.dispatcher.namespaces is set', () => {
    const objects = renderChart('full');
    const scopes = new Set(
      (grantsByServiceAccount(objects).get(account('dispatcher')) ?? []).map((g) => g.scope),
    );
    expect([...scopes].sort()).toEqual(['icepack-analytics', 'icepack-prod']);
    expect(ofKind(objects, 'ClusterRoleBinding').map((o) => o.metadata.name)).not.toContain(
      'icepack-dispatcher',
    );
  });

  it('grants nothing and mounts no token when the provisioner runs in local mode (bindings then name the local runner)', () => {
    const objects = renderChart('local');
    expect(grantsByServiceAccount(objects).size).toBe(0);
    for (const service of SERVICES) expect(automount(objects, service).pod, service).toBe(false);
  });

  it('mounts the token for the provisioner and the dispatcher, which call the API', () => {
    const objects = renderChart();
    for (const service of ['provisioner', 'dispatcher']) {
      expect(automount(objects, service), service).toEqual({
        serviceAccount: true,
        pod: true,
        podAccount: `icepack-${service}`,
      });
    }
  });
});

describe('the Spark-driver rights on the allow-list', () => {
  it('are exactly the rules of the Role the provisioner creates in each group namespace', () => {
    const group = parseResourceGroup({
      name: 'demo',
      catalog: 'demo',
      cpu: '8',
      memory: '32Gi',
      slots: 2,
    });
    const rules = roleObject(group).rules.flatMap((rule) =>
      rule.apiGroups.flatMap((g) =>
        rule.resources.flatMap((r) => rule.verbs.map((v) => `${g || 'core'}/${r}:${v}`)),
      ),
    );
    expect([...new Set(rules)].sort()).toEqual([...SPARK_DRIVER_RIGHTS].sort());
  });
});

describe('the RBAC check itself', () => {
  it('reports a right beyond the allow-list', () => {
    const objects = renderChart().map((o) =>
      o.kind === 'ClusterRole' && o.metadata.name === 'icepack-dispatcher'
        ? {
            ...o,
            rules: [
              ...(o.rules as object[]),
              { apiGroups: [''], resources: ['pods/exec'], verbs: ['create'] },
              { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
            ],
          }
        : o,
    );
    expect(
      excessGrants(
        grantsByServiceAccount(objects).get(account('dispatcher')) ?? [],
        ALLOWED.dispatcher,
      ),
    ).toEqual(['*/*:*', 'core/pods/exec:create']);
  });

  it('refuses a binding to a role the chart does not define', () => {
    const extra: KubeObject = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'sneaky' },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'cluster-admin',
      },
      subjects: [{ kind: 'ServiceAccount', name: 'icepack-planner', namespace: RELEASE_NAMESPACE }],
    };
    expect(() => grantsByServiceAccount([...renderChart(), extra])).toThrow(UnknownRoleError);
  });
});
