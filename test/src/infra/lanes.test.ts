import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inSharedLane, laneOrder, SHARED_LANE } from './lanes.ts';

const root = resolve(import.meta.dirname, '../../..');

/** What a shared-lane file must not do, as its text shows it (lanes.ts says why). */
const FORBIDDEN: Record<string, RegExp> = {
  'starts Spark':
    /LocalRunner|spark-submit|runPython|dispatchTable|generateFixtures|infra\.python|sparkJars|WorkerProcesses|SparkApplication/,
  'uses Kubernetes': /\.kube\b|KubeConfig|@kubernetes|kubeconfig|k8s/i,
  'runs a service script (which may stop a shared service)':
    /\b(infra|redis|kafka|catalog|s3|s3-catalog|oauth-catalog|k8s|services)\.sh\b/,
};

describe('the shared integration lane', () => {
  it.each(SHARED_LANE)(
    '%s exists, is an integration file, and starts no Spark, no Kubernetes, no service script',
    (file) => {
      expect(file.endsWith('.int.test.ts')).toBe(true);
      const path = join(root, file);
      expect(existsSync(path)).toBe(true);
      const text = readFileSync(path, 'utf8');
      const broken = Object.entries(FORBIDDEN)
        .filter(([, pattern]) => pattern.test(text))
        .map(([what]) => what);
      expect(broken).toEqual([]);
    },
  );

  it('knows a file by its path from the repository root, with either separator', () => {
    expect(inSharedLane('services/planner/src/api.int.test.ts')).toBe(true);
    expect(inSharedLane('services\\planner\\src\\api.int.test.ts')).toBe(true);
    expect(inSharedLane('test/src/e2e/maintenance.int.test.ts')).toBe(false);
  });
});

describe('laneOrder', () => {
  const isShared = (f: string): boolean => f.startsWith('s');

  it('starts the first exclusive file, then every shared one, then the other exclusive ones, each in the given order', () => {
    expect(laneOrder(['e1', 's1', 'e2', 's2', 'e3'], isShared)).toEqual([
      'e1',
      's1',
      's2',
      'e2',
      'e3',
    ]);
  });

  it('keeps a list of one lane as it is', () => {
    expect(laneOrder(['s1', 's2'], isShared)).toEqual(['s1', 's2']);
    expect(laneOrder(['e1', 'e2'], isShared)).toEqual(['e1', 'e2']);
    expect(laneOrder([], isShared)).toEqual([]);
  });
});
