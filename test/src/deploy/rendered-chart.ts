import { join } from 'node:path';
import { loadYaml } from '@kubernetes/client-node';
import { CHART_DIR, SCENARIO_DIR, cachedTool, runTool } from './deploy-tools.ts';

/** A rendered Kubernetes object, read as plain data. */
export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly [field: string]: unknown;
}

export const RELEASE_NAMESPACE = 'icepack';

/**
 * `helm template` of the chart with the named scenario (`deploy/checks/values/<name>.yaml`,
 * `default` for none) and extra `--set` pairs, parsed into objects.
 */
export function renderChart(scenario = 'default', sets: readonly string[] = []): KubeObject[] {
  const key = JSON.stringify([scenario, sets]);
  const cached = renders.get(key);
  if (cached !== undefined) return cached;
  const objects = render(scenario, sets);
  renders.set(key, objects);
  return objects;
}

// helm is run once per set of values: tests only read the objects.
const renders = new Map<string, KubeObject[]>();

function render(scenario: string, sets: readonly string[]): KubeObject[] {
  // Helm's default Kubernetes version (1.20) is below the chart's kubeVersion.
  const args = [
    'template',
    'icepack',
    CHART_DIR,
    '--namespace',
    RELEASE_NAMESPACE,
    '--kube-version',
    '1.33.0',
  ];
  if (scenario !== 'default') args.push('-f', join(SCENARIO_DIR, `${scenario}.yaml`));
  for (const set of sets) args.push('--set', set);
  const output = runTool(cachedTool('bin/helm'), args);
  return output
    .split(/^---\s*$/m)
    .filter((doc) => /^kind:/m.test(doc))
    .map((doc) => loadYaml<KubeObject>(doc));
}

export function ofKind(objects: readonly KubeObject[], kind: string): KubeObject[] {
  return objects.filter((o) => o.kind === kind);
}
