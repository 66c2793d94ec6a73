// The orphans task (issue 20 point 4, ADR 0032) on a table whose files live on S3 — moto's S3
// server and the S3-backed REST catalog of deploy/local/s3-catalog.sh — while a writer commits
// to it, in one Spark session (orphans_s3.py): no live file is touched, the table reads the
// same (its rows before plus exactly the writer's), an old unreferenced file is quarantined, the
// files of a table nested in its location are left alone, and a restore brings the file back.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { runLocalScript } from '@icepack/test';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { runPython } from '../fixtures/run-python.ts';

const infra = inject('infra');
const script = join(import.meta.dirname, 'orphans_s3.py');

interface Digest {
  readonly rows: number;
  readonly sha256: string;
}

interface Facts {
  readonly writerErrors: string[];
  readonly writerCommitsDuringRun: number;
  readonly candidates: string[];
  readonly outcome: {
    readonly quarantined: number;
    readonly failed: number;
    readonly run: string | null;
    readonly excludedPrefixes: number;
    readonly olderThan: string;
  };
  readonly moved: string[];
  readonly plantedMoved: boolean;
  readonly plantedNestedMoved: boolean;
  readonly movedNotListedBeforeCutoff: string[];
  readonly movedButReferenced: string[];
  readonly referencedMissing: string[];
  readonly plantedInQuarantine: number | null;
  readonly nestedFilesUnchanged: boolean;
  readonly nestedRowsUnchanged: boolean;
  readonly ordersBefore: Digest;
  readonly ordersExpected: Digest;
  readonly ordersAfter: Digest;
  readonly writerRows: number;
  readonly restore: { readonly restored: number; readonly missing: number };
  readonly plantedBack: boolean;
  readonly plantedBackText: boolean;
  readonly quarantineLeft: string[];
  readonly ordersAfterRestore: Digest;
  readonly realClock: { readonly ok: boolean; readonly orphans: { readonly found: number } };
}

describe('orphan files on S3 with a writer committing during the run', () => {
  let facts: Facts;

  beforeAll(async () => {
    // The S3 store and its catalog are not part of `infra.sh up`: started here if down, and
    // left running like the rest.
    const up = await runLocalScript('s3-catalog.sh', ['up']);
    if (up.code !== 0)
      throw new Error(
        `deploy/local/s3-catalog.sh up failed (exit ${String(up.code)}):\n${up.output}`,
      );
    const stdout = await runPython(
      script,
      [
        '--catalog-uri',
        infra.s3CatalogUri,
        '--catalog-name',
        'orphans_s3',
        '--namespace',
        `orphans_${randomBytes(3).toString('hex')}`,
        '--s3-endpoint',
        infra.s3Endpoint,
        '--bucket',
        infra.s3Bucket,
      ],
      {
        python: infra.python,
        // moto accepts any key; S3FileIO takes them from the AWS chain.
        env: {
          ICEPACK_SPARK_JARS: infra.sparkJars,
          AWS_ACCESS_KEY_ID: 'icepack',
          AWS_SECRET_ACCESS_KEY: 'icepack',
          AWS_REGION: 'us-east-1',
        },
        timeoutMs: 600_000,
      },
    );
    facts = JSON.parse(stdout.trim().split('\n').at(-1)!) as Facts;
  }, 900_000);

  it('quarantines the old unreferenced file and touches no live file while the writer commits', () => {
    expect(facts.writerErrors).toEqual([]);
    // The writer committed between the listing and the moves.
    expect(facts.writerCommitsDuringRun).toBeGreaterThan(0);
    expect(facts.outcome.failed).toBe(0);
    expect(facts.plantedMoved).toBe(true);
    expect(facts.plantedInQuarantine).toBeGreaterThan(0);
    // Only files that existed before the cutoff moved, and none the table references now.
    expect(facts.movedNotListedBeforeCutoff).toEqual([]);
    expect(facts.movedButReferenced).toEqual([]);
    expect(facts.referencedMissing).toEqual([]);
    expect(facts.outcome.quarantined).toBe(facts.moved.length);
  });

  it('reads the same: the rows before plus exactly the writer’s', () => {
    expect(facts.writerRows).toBeGreaterThan(0);
    expect(facts.ordersAfter).toEqual(facts.ordersExpected);
    expect(facts.ordersAfter.rows).toBe(facts.ordersBefore.rows + facts.writerRows);
  });

  it('leaves the files of a table nested in the location alone, even unreferenced ones', () => {
    expect(facts.outcome.excludedPrefixes).toBe(1);
    expect(facts.plantedNestedMoved).toBe(false);
    expect(facts.candidates.some((path) => path.includes('/nested/'))).toBe(false);
    expect(facts.nestedFilesUnchanged).toBe(true);
    expect(facts.nestedRowsUnchanged).toBe(true);
  });

  it('restores the quarantine run: the file back byte for byte, the quarantine empty', () => {
    expect(facts.restore.restored).toBe(facts.outcome.quarantined);
    expect(facts.restore.missing).toBe(0);
    expect(facts.plantedBack).toBe(true);
    expect(facts.plantedBackText).toBe(true);
    expect(facts.quarantineLeft).toEqual([]);
    expect(facts.ordersAfterRestore).toEqual(facts.ordersAfter);
  });

  it('with the real clock moves nothing younger than a day', () => {
    expect(facts.realClock).toEqual({ ok: true, orphans: expect.objectContaining({ found: 0 }) });
  });
});
