import { ofKind, type KubeObject } from '@icepack/test/deploy';

interface EnvVar {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: { readonly secretKeyRef?: { readonly name: string; readonly key: string } };
}

interface Container {
  readonly env?: readonly EnvVar[];
  readonly envFrom?: readonly { readonly configMapRef?: { readonly name: string } }[];
}

/**
 * Stand-ins for values that come from Secrets, shaped like real ones (the services validate
 * them: a Redis URL, a token of at least 16 characters).
 */
function secretStandIn(variable: string): string {
  return variable === 'ICEPACK_REDIS_URL'
    ? 'redis://:password@redis:6379/0'
    : 'secret-value-from-a-kubernetes-secret';
}

/** The environment each rendered Deployment's container gets, keyed by Deployment name. */
export function deploymentEnvironments(
  objects: readonly KubeObject[],
): Map<string, Record<string, string>> {
  const configMaps = new Map(
    ofKind(objects, 'ConfigMap').map((cm) => [
      cm.metadata.name,
      (cm.data as Record<string, string> | undefined) ?? {},
    ]),
  );
  const result = new Map<string, Record<string, string>>();
  for (const deployment of ofKind(objects, 'Deployment')) {
    const spec = deployment.spec as { template: { spec: { containers: readonly Container[] } } };
    const container = spec.template.spec.containers[0];
    const env: Record<string, string> = {};
    for (const from of container?.envFrom ?? []) {
      const name = from.configMapRef?.name;
      const data = name === undefined ? undefined : configMaps.get(name);
      if (data === undefined)
        throw new Error(
          `${deployment.metadata.name}: envFrom names ConfigMap ${name}, not rendered`,
        );
      Object.assign(env, data);
    }
    for (const variable of container?.env ?? []) {
      env[variable.name] = variable.value ?? secretStandIn(variable.name);
    }
    result.set(deployment.metadata.name, env);
  }
  return result;
}
