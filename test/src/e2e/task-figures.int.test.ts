// A task's properties, before and after figures and commit totals as the job reads them — JSON
// of Iceberg's own serializers, one Py4J transfer each (the session's TaskJvm) — are the values
// the job's earlier per-value reads give, on one real merge-on-read table in one Spark session
// (task_figures.py), with a writer's append between the merge and its after figures.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { runPython } from '../fixtures/run-python.ts';

const infra = inject('infra');
const script = join(import.meta.dirname, 'task_figures.py');

interface Figures {
  readonly snapshotId: string | null;
  readonly snapshots: number;
  readonly dataFiles: number;
  readonly deleteFiles: number;
  readonly bytes: number;
  readonly records: number;
}
type Commits = Record<string, number>;
type Since = [string, Record<string, string>][];

interface Facts {
  readonly properties: { job: Record<string, string>; reference: Record<string, string> };
  readonly oddValue: string;
  readonly beforeRead: { job: Figures; reference: Figures };
  readonly result: { before: Figures; after: Figures; commits: Commits };
  readonly reference: { after: Figures; commits: Commits; operations: string[] };
  readonly commitsSince: { job: Since; reference: Since };
  readonly wholeHistory: { job: Since; reference: Since };
  readonly peakHeap: { referenceBefore: number[]; job: number[]; referenceAfter: number[] };
}

describe("a task's figures read as JSON transfers", () => {
  let facts: Facts;

  beforeAll(async () => {
    const stdout = await runPython(
      script,
      [
        '--catalog-uri',
        infra.catalogUri,
        '--namespace',
        `figures_${randomBytes(3).toString('hex')}`,
      ],
      { python: infra.python, env: { ICEPACK_SPARK_JARS: infra.sparkJars }, timeoutMs: 600_000 },
    );
    facts = JSON.parse(stdout.trim().split('\n').at(-1)!) as Facts;
  }, 900_000);

  it('reads the table properties the guard checks as they are, whatever a value holds', () => {
    expect(facts.properties.job).toEqual(facts.properties.reference);
    expect(facts.properties.job['icepack.note']).toBe(facts.oddValue);
    expect(facts.properties.job['icepack.empty']).toBe('');
  });

  it('reads the same before figures, and reports them', () => {
    expect(facts.beforeRead.job).toEqual(facts.beforeRead.reference);
    expect(facts.beforeRead.job).toMatchObject({ snapshots: 5, dataFiles: 6, deleteFiles: 6 });
    expect(facts.result.before).toEqual(facts.beforeRead.reference);
  });

  it('reports the same after figures and commit totals, the writer’s append left out', () => {
    expect(facts.result.after).toEqual(facts.reference.after);
    expect(facts.result.commits).toEqual(facts.reference.commits);
    // The merge's rewrite and its dangling-delete removal, then the writer's append.
    expect(facts.reference.operations).toEqual(['append', 'replace', 'replace']);
    expect(facts.result.commits.deleteFilesRemoved).toBe(6);
  });

  it('walks the same commits, with the same summaries, back to before and to the root', () => {
    expect(facts.commitsSince.job).toEqual(facts.commitsSince.reference);
    expect(facts.wholeHistory.job).toEqual(facts.wholeHistory.reference);
    expect(facts.wholeHistory.job).toHaveLength(8);
  });

  it('sums the same heap pools for the memory probe', () => {
    const [max] = [facts.peakHeap.job[1]!];
    expect(facts.peakHeap.referenceBefore[1]).toBe(max);
    const capped = (peak: number) => Math.min(peak, max);
    expect(facts.peakHeap.job[0]).toBeGreaterThanOrEqual(
      capped(facts.peakHeap.referenceBefore[0]!),
    );
    expect(facts.peakHeap.job[0]).toBeLessThanOrEqual(capped(facts.peakHeap.referenceAfter[0]!));
  });
});
