import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  KUBERNETES_FILES,
  laneOf,
  laneOrder,
  laneRank,
  PAIRED_LANE,
  SHARED_LANE,
  slotsOf,
  type Lane,
} from './lanes.ts';

const root = resolve(import.meta.dirname, '../../..');

/** A file that uses the Kubernetes control plane, as its text shows it. */
const USES_KUBERNETES = /\.kube\b|KubeConfig|@kubernetes|kubeconfig|k8s/i;

/** What a shared-lane file must not do, as its text shows it (lanes.ts says why). */
const FORBIDDEN: Record<string, RegExp> = {
  'starts Spark':
    /LocalRunner|spark-submit|runPython|sparkSql|dispatchTable|generateFixtures|infra\.python|sparkJars|WorkerProcesses|SparkApplication/,
  'uses Kubernetes': USES_KUBERNETES,
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
    expect(laneOf('services/planner/src/api.int.test.ts')).toBe('shared');
    expect(laneOf('services\\planner\\src\\api.int.test.ts')).toBe('shared');
    expect(laneOf('test/src/e2e/maintenance.int.test.ts')).toBe('paired');
    expect(laneOf('test/src/fixtures/fixtures.int.test.ts')).toBe('exclusive');
    expect(laneOf('test/src/e2e/maintenance-k8s.int.test.ts')).toBe('kubernetes');
  });

  it('puts no shared file in another lane, and lists no file twice', () => {
    for (const list of [SHARED_LANE, PAIRED_LANE, KUBERNETES_FILES])
      expect(new Set(list).size).toBe(list.length);
    const heavy = new Set([...PAIRED_LANE, ...KUBERNETES_FILES]);
    expect(SHARED_LANE.filter((f) => heavy.has(f))).toEqual([]);
  });
});

describe('the paired integration lane', () => {
  it.each(PAIRED_LANE)('%s exists and is an integration file', (file) => {
    expect(file.endsWith('.int.test.ts')).toBe(true);
    expect(existsSync(join(root, file))).toBe(true);
  });

  it('holds one slot for a paired file, Kubernetes or not; both for any other heavy file; none for a shared one', () => {
    expect(slotsOf('test/src/e2e/maintenance.int.test.ts')).toBe('paired');
    expect(slotsOf('services/dispatcher/src/adapters/dispatch-outcomes.int.test.ts')).toBe(
      'paired',
    );
    expect(slotsOf('services/dispatcher/src/adapters/kube-quota.int.test.ts')).toBe('exclusive');
    expect(slotsOf('test/src/fixtures/fixtures.int.test.ts')).toBe('exclusive');
    expect(slotsOf('services/planner/src/api.int.test.ts')).toBe('none');
  });

  it('never pairs a file that starts a second API server on the cluster’s etcd', () => {
    const starting = KUBERNETES_FILES.filter((f) =>
      /startSecondApiServer/.test(readFileSync(join(root, f), 'utf8')),
    );
    expect(starting).toEqual(['services/dispatcher/src/adapters/kube-quota.int.test.ts']);
    expect(PAIRED_LANE.filter((f) => starting.includes(f))).toEqual([]);
  });
});

describe('the Kubernetes files', () => {
  it('are exactly the integration files that use Kubernetes: the global setup does not start it for the others', () => {
    const files = execFileSync('git', ['ls-files', '*.int.test.ts'], {
      cwd: root,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((f) => f !== '');
    const usingKubernetes = files.filter((f) =>
      USES_KUBERNETES.test(readFileSync(join(root, f), 'utf8')),
    );
    expect([...KUBERNETES_FILES].sort()).toEqual(usingKubernetes.sort());
  });
});

describe('laneOrder', () => {
  const lanes: Record<string, Lane> = { s: 'shared', p: 'paired', e: 'exclusive', k: 'kubernetes' };
  const lane = (f: string): Lane => lanes[f[0]!]!;

  it('starts the first paired file, then every shared one, then the other paired ones, the exclusive ones and the Kubernetes ones, each in the given order', () => {
    expect(laneOrder(['k1', 'e1', 'p1', 's1', 'e2', 'k2', 's2', 'p2'], lane)).toEqual([
      'p1',
      's1',
      's2',
      'p2',
      'e1',
      'e2',
      'k1',
      'k2',
    ]);
  });

  it('starts an exclusive file first when there is no paired one, a Kubernetes file only when there is neither', () => {
    expect(laneOrder(['k1', 'e1', 's1', 'e2', 'k2', 's2'], lane)).toEqual([
      'e1',
      's1',
      's2',
      'e2',
      'k1',
      'k2',
    ]);
    expect(laneOrder(['s1', 'k1', 'k2'], lane)).toEqual(['k1', 's1', 'k2']);
  });

  it('orders the files of a lane by their rank, keeping the given order among equals', () => {
    const rank = (f: string): number => ({ p2: 0, p3: 1 })[f] ?? Number.POSITIVE_INFINITY;
    expect(laneOrder(['s1', 'p1', 'p3', 'e1', 'p2', 'p4'], lane, rank)).toEqual([
      'p2',
      's1',
      'p3',
      'p1',
      'p4',
      'e1',
    ]);
  });

  it('ranks the paired files as listed, longest first, and every other file after them', () => {
    expect(PAIRED_LANE.map(laneRank)).toEqual(PAIRED_LANE.map((_, i) => i));
    expect(laneRank('services\\dispatcher\\src\\adapters\\dispatch-resident.int.test.ts')).toBe(0);
    expect(laneRank('test/src/fixtures/fixtures.int.test.ts')).toBe(Number.POSITIVE_INFINITY);
  });

  it('keeps a list of one lane as it is', () => {
    expect(laneOrder(['s1', 's2'], lane)).toEqual(['s1', 's2']);
    expect(laneOrder(['e1', 'e2'], lane)).toEqual(['e1', 'e2']);
    expect(laneOrder([], lane)).toEqual([]);
  });
});
