// The orphans task (issue 20 point 4, ADR 0032) on a table whose files live on S3 — moto's S3
// server and the S3-backed REST catalog of deploy/local/s3.sh and s3-catalog.sh, this test's own
// instances — while a writer commits
// to it, in one Spark session (orphans_s3.py): no live file is touched, the table reads the
// same (its rows before plus exactly the writer's), an old unreferenced file is quarantined and a
// young one is not, the files of a table nested in its location are left alone, a restore brings
// the file back, and a quarantine is kept within its window and purged after it.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { tempDir } from '@icepack/runtime/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runPython } from '../fixtures/run-python.ts';
import { freePort } from '../infra/free-port.ts';
import { runLocalScriptOrThrow } from '../infra/local-script.ts';

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
  readonly plantedGoneFromLocation: boolean;
  readonly youngMoved: boolean;
  readonly youngUntouched: boolean;
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
  readonly realClock: { readonly ok: boolean; readonly orphans: Record<string, unknown> };
  readonly quarantineAfterRealClock: string[];
  readonly second: { readonly quarantined: number; readonly failed: number };
  readonly secondMoved: string[];
  readonly secondQuarantine: string[];
  readonly purge: {
    readonly purgedRuns: number;
    readonly purgedFiles: number;
    readonly keptRuns: number;
    readonly unreadableRuns: number;
    readonly found: number;
  };
  readonly quarantineAfterPurge: string[];
  readonly plantedAfterPurge: number | null;
  readonly youngAfterPurge: number | null;
  readonly referencedMissingAfterPurge: string[];
  readonly ordersAfterPurge: Digest;
  readonly nestedFilesAfterPurge: boolean;
  readonly plantedPaths: [string, string];
}

/** `deploy/local/<script> <args>` on this test's own S3 store and catalog; throws its output. */
function privateScript(env: NodeJS.ProcessEnv, script: string, ...args: string[]) {
  return runLocalScriptOrThrow(script, args, env);
}

describe('orphan files on S3 with a writer committing during the run', () => {
  let facts: Facts;
  // A catalog of this test alone: an orphans run loads every table of its catalog (a table it
  // cannot read fails the run, since it may be nested in the location), so another test's
  // half-made table — or a shared catalog whose S3 store restarted empty (moto keeps its
  // objects in memory, the catalog its SQLite file) — would decide this test's outcome.
  let stackEnv: NodeJS.ProcessEnv | undefined;
  // The S3 store's and the catalog's state and logs: asked for above the afterAll that stops
  // them, so it is removed after they stopped.
  const runDir = tempDir('icepack-orphans-s3-');

  beforeAll(async () => {
    const [s3Port, catalogPort] = [await freePort(), await freePort()];
    const env = {
      ICEPACK_RUN: runDir,
      ICEPACK_S3_PORT: String(s3Port),
      ICEPACK_S3_CATALOG_PORT: String(catalogPort),
    };
    stackEnv = env;
    await privateScript(env, 's3-catalog.sh', 'up');
    const stdout = await runPython(
      script,
      [
        '--catalog-uri',
        `http://127.0.0.1:${String(catalogPort)}`,
        '--catalog-name',
        'orphans_s3',
        '--namespace',
        `orphans_${randomBytes(3).toString('hex')}`,
        '--s3-endpoint',
        `http://127.0.0.1:${String(s3Port)}`,
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

  afterAll(async () => {
    if (stackEnv === undefined) return;
    try {
      await privateScript(stackEnv, 's3-catalog.sh', 'stop');
    } finally {
      await privateScript(stackEnv, 's3.sh', 'stop');
    }
  }, 60_000);

  it('quarantines the old unreferenced file and touches no live file while the writer commits', () => {
    expect(facts.writerErrors).toEqual([]);
    // The writer committed between the listing and the moves.
    expect(facts.writerCommitsDuringRun).toBeGreaterThan(0);
    expect(facts.outcome.failed).toBe(0);
    expect(facts.plantedMoved).toBe(true);
    expect(facts.plantedGoneFromLocation).toBe(true);
    expect(facts.plantedInQuarantine).toBeGreaterThan(0);
    // A file younger than the cutoff is no candidate and stays as it was.
    expect(facts.youngMoved).toBe(false);
    expect(facts.youngUntouched).toBe(true);
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

  it('with the real clock moves nothing younger than a day and keeps a quarantine within its window', () => {
    // The second run (cutoff after the restore) quarantined the restored and the young file.
    expect(facts.second.failed).toBe(0);
    expect(facts.secondMoved).toEqual([...facts.plantedPaths].sort());
    expect(facts.realClock).toMatchObject({
      ok: true,
      orphans: { found: 0, quarantined: 0, purgedRuns: 0, keptRuns: 1 },
    });
    expect(facts.quarantineAfterRealClock).toEqual(facts.secondQuarantine);
    expect(facts.secondQuarantine).toHaveLength(3); // two files and the manifest
  });

  it('purges the quarantine after its window: the files and the manifest gone, the table the same', () => {
    expect(facts.purge).toMatchObject({
      purgedRuns: 1,
      purgedFiles: 2,
      keptRuns: 0,
      unreadableRuns: 0,
      found: 0,
    });
    expect(facts.quarantineAfterPurge).toEqual([]);
    expect(facts.plantedAfterPurge).toBeNull();
    expect(facts.youngAfterPurge).toBeNull();
    expect(facts.referencedMissingAfterPurge).toEqual([]);
    expect(facts.ordersAfterPurge).toEqual(facts.ordersAfter);
    expect(facts.nestedFilesAfterPurge).toBe(true);
  });
});
