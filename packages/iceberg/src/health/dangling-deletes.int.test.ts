import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TableId, TableState } from '@icepack/types';
import { infraEnv, pythonOfVersion, sparkSql } from '@icepack/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestCatalog } from '../catalog/rest-catalog.ts';
import { computeTableState } from './compute-table-state.ts';

// Issue 15, defect 4: a merge that rewrites every data file of a merge-on-read table left its
// position-delete files behind. On real Spark: the scanner counts those dangling deletes, and
// the job's merge (run with the job image's Python, 3.10) removes them with rows unchanged.
// Issue 16, findings 2 and 3, on the same tables (no extra table session): the job refuses a
// table recreated under the task's name, and a forged zero retention expires nothing the
// table's own `history.expire.max-snapshot-age-ms` keeps.
// ADR 0051, on two more tables built alike in the same session: a cleanup of a table under the
// job's live-file bound expires in the driver (Iceberg core), and deletes and counts exactly
// what Spark's action does on the other table, held over the bound.
// ADR 0054, on two more tables built alike in the same session: a merge of two of three
// partitions judges and removes the dangling delete files in the driver on one, with Spark's
// actions on the other (held over the bound); the same counts, exactly the dangling files gone
// (the unmerged partition's delete files, which still apply, kept), the same rows.

const infra = infraEnv();
const sparkCatalog = 'h3dangling';
const namespace = `dangling_${randomBytes(4).toString('hex')}`;
const table: TableId = { catalog: sparkCatalog, namespace: [namespace], name: 'customers' };
const sqlName = `${sparkCatalog}.${namespace}.customers`;
const expectedName = `${sparkCatalog}.${namespace}.expected`;
const catalog = new RestCatalog({ name: sparkCatalog, uri: infra.catalogUri });
const jobFile = join(
  import.meta.dirname,
  '..',
  '..',
  '..',
  '..',
  'jobs',
  'spark',
  'icepack_job.py',
);
const sparkSubmit = join(infra.cacheDir, 'venv', 'bin', 'spark-submit');
// Bounds, not expectations: a Spark session on two cores shared by several test runs can take
// many minutes; only a hung one should fail the test.
const SPARK_TIMEOUT_MS = 20 * 60_000;
const SLOW = { timeoutMs: SPARK_TIMEOUT_MS };

async function scan(): Promise<TableState> {
  const outcome = await catalog.loadTable(table);
  if (outcome.status !== 'loaded') throw new Error('expected a loaded table');
  return computeTableState(outcome.table);
}

interface JobExit {
  readonly code: number;
  readonly result: Record<string, unknown>;
  readonly stderr: string;
}

/** Where the venv's PySpark lives: spark-submit's SPARK_HOME whatever Python runs the job. */
async function sparkHome(): Promise<string> {
  const { stdout } = await promisify(execFile)(infra.python, [
    '-c',
    'import os, pyspark; print(os.path.dirname(pyspark.__file__))',
  ]);
  return stdout.trim();
}

/**
 * The job as the local runner starts it: spark-submit with the job file, one result line.
 * `python` runs the driver (PYSPARK_PYTHON/PYSPARK_DRIVER_PYTHON); PySpark itself comes from
 * SPARK_HOME's pyspark.zip, which spark-submit puts on its path.
 */
async function runJob(task: object, python: string, extra: string[] = []): Promise<JobExit> {
  const home = await sparkHome();
  const args = [
    '--master',
    'local[2]',
    '--conf',
    'spark.ui.enabled=false',
    '--conf',
    'spark.sql.shuffle.partitions=2',
    '--conf',
    `spark.jars=${infra.sparkJars}`,
    jobFile,
    '--task-json',
    JSON.stringify(task),
    '--catalog-name',
    sparkCatalog,
    '--catalog-uri',
    infra.catalogUri,
    ...extra,
  ];
  return new Promise((resolve) => {
    execFile(
      sparkSubmit,
      args,
      {
        env: {
          ...process.env,
          SPARK_HOME: home,
          PYSPARK_PYTHON: python,
          PYSPARK_DRIVER_PYTHON: python,
          SPARK_LOCAL_IP: '127.0.0.1',
          OTEL_SDK_DISABLED: 'true',
        },
        timeout: SPARK_TIMEOUT_MS,
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        const line = stdout.trim().split('\n').at(-1) ?? '';
        let result: Record<string, unknown> = {};
        try {
          result = JSON.parse(line) as Record<string, unknown>;
        } catch {
          // left empty: the assertion on the exit code shows stderr
        }
        resolve({ code, result, stderr: stderr.slice(-4_000) });
      },
    );
  });
}

/** Spark fails the statement unless both tables hold exactly the same rows (with duplicates). */
function sameRowsSql(a: string, b: string): string {
  return (
    `SELECT assert_true(count(*) = 0, 'rows differ') FROM ` +
    `((SELECT * FROM ${a} EXCEPT ALL SELECT * FROM ${b}) UNION ALL ` +
    `(SELECT * FROM ${b} EXCEPT ALL SELECT * FROM ${a}))`
  );
}

const mergeTask = (tableUuid: string) => ({
  id: `merge/${sparkCatalog}/${namespace}/customers`,
  type: 'merge',
  table: { catalog: sparkCatalog, namespace: [namespace], name: 'customers' },
  state: { tableUuid },
  parameters: {
    targetFileSizeBytes: 128 * 1024 * 1024,
    minFileSizeBytes: 96 * 1024 * 1024,
    maxFileSizeBytes: 230 * 1024 * 1024,
    minInputFiles: 2,
    deleteFileThreshold: 1,
    rewritePositionDeletes: false,
  },
});

/** A cleanup as a forged TableState (`max-snapshot-age-ms=0`) makes it: expire all but one. */
const forgedCleanup = (name: string, tableUuid: string) => ({
  id: `cleanup/${sparkCatalog}/${namespace}/${name}`,
  type: 'cleanup',
  table: { catalog: sparkCatalog, namespace: [namespace], name },
  state: { tableUuid },
  parameters: { olderThan: new Date().toISOString(), retainLast: 1, retentionMs: 0 },
});

const DAY_MS = 24 * 60 * 60 * 1000;

/** The REST catalog's own endpoint for a table of the test namespace (no Spark). */
const tableUrl = (name: string) =>
  `${infra.catalogUri}/v1/namespaces/${encodeURIComponent(namespace)}/tables/${encodeURIComponent(name)}`;

/** Built alike; the first expires under the job's bound, the second is held over it. */
const EXPIRY_TWINS = ['expiry_driver', 'expiry_spark'] as const;

/** Built alike; a merge of `eu` and `ap` judges dangling deletes in the driver on the first, with Spark on the second. */
const DANGLING_TWINS = ['dangling_driver', 'dangling_spark'] as const;
const twinsExpected = `${sparkCatalog}.${namespace}.twins_expected`;
const deletesBefore = (name: string) => `${sparkCatalog}.${namespace}.${name}_deletes_before`;

/** Every file under a table's location on the local warehouse. */
async function filesOf(name: string): Promise<Set<string>> {
  const outcome = await catalog.loadTable({ ...table, name });
  if (outcome.status !== 'loaded') throw new Error(`expected ${name} loaded`);
  const location = outcome.table.metadata.location;
  if (!location.startsWith('file:'))
    throw new Error(`${location}: the test reads a local warehouse`);
  const root = fileURLToPath(
    location.startsWith('file://') ? location : `file://${location.slice(5)}`,
  );
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return new Set(
    entries
      .filter((e) => e.isFile() && !e.name.startsWith('.'))
      .map((e) => join(e.parentPath, e.name)),
  );
}

type Metadata = Extract<
  Awaited<ReturnType<RestCatalog['loadTable']>>,
  { status: 'loaded' }
>['table']['metadata'];

interface ExpiryRun {
  readonly before: Metadata;
  readonly after: Metadata;
  readonly gone: readonly string[];
  readonly result: Record<string, unknown>;
}

let afterPlainRewrite: TableState;

beforeAll(async () => {
  const rows = (from: number, n: number, region: string) =>
    Array.from({ length: n }, (_, i) => `(${from + i}, '${region}', 'v${from + i}')`).join(', ');
  // One Spark session (the machine is shared): the table, its merge-on-read deletes, the rows
  // every later state must hold, then Iceberg's merge without dangling-delete removal, as
  // Icepack ran it before: every data file rewritten, the delete files stay.
  await sparkSql(
    infra,
    sparkCatalog,
    [
      `CREATE NAMESPACE ${sparkCatalog}.${namespace}`,
      `CREATE TABLE ${sqlName} (id BIGINT, region STRING, v STRING) USING iceberg
       PARTITIONED BY (region)
       TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read',
                      'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read',
                      'history.expire.max-snapshot-age-ms'='${DAY_MS}')`,
      `INSERT INTO ${sqlName} VALUES ${rows(1, 10, 'eu')}, ${rows(101, 10, 'us')}`,
      `INSERT INTO ${sqlName} VALUES ${rows(11, 10, 'eu')}, ${rows(111, 10, 'us')}`,
      `DELETE FROM ${sqlName} WHERE id % 7 = 0`,
      `UPDATE ${sqlName} SET v = 'updated' WHERE id % 5 = 0`,
      `CREATE TABLE ${expectedName} USING iceberg AS SELECT * FROM ${sqlName}`,
      `CALL ${sparkCatalog}.system.rewrite_data_files(table => '${namespace}.customers',
       options => map('rewrite-all', 'true'))`,
      // ADR 0051's twins: deletes and updates, then an overwrite of every row with itself,
      // after which no data or delete file of the older snapshots is live.
      ...EXPIRY_TWINS.flatMap((name) => {
        const twin = `${sparkCatalog}.${namespace}.${name}`;
        return [
          `CREATE TABLE ${twin} (id BIGINT, region STRING, v STRING) USING iceberg
           PARTITIONED BY (region)
           TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read',
                          'write.update.mode'='merge-on-read', 'history.expire.max-snapshot-age-ms'='1')`,
          `INSERT INTO ${twin} VALUES ${rows(1, 10, 'eu')}, ${rows(101, 10, 'us')}`,
          `INSERT INTO ${twin} VALUES ${rows(11, 10, 'eu')}, ${rows(111, 10, 'us')}`,
          `DELETE FROM ${twin} WHERE id % 7 = 0`,
          `UPDATE ${twin} SET v = 'updated' WHERE id % 5 = 0`,
          `INSERT OVERWRITE ${twin} SELECT * FROM ${twin}`,
        ];
      }),
      // ADR 0054's twins: three partitions; a delete over all, new rows in `eu` (newer than its
      // deletes), an update in `ap` (deletes as new as the last commit). A merge of `eu` and `ap`
      // then leaves `eu`'s deletes older than every live file of the partition (Iceberg's
      // sequence rule finds them), `ap`'s naming removed files, and `us`'s still applying.
      ...DANGLING_TWINS.flatMap((name) => {
        const twin = `${sparkCatalog}.${namespace}.${name}`;
        const three = (from: number) =>
          `${rows(from, 10, 'eu')}, ${rows(from + 100, 10, 'us')}, ${rows(from + 200, 10, 'ap')}`;
        return [
          `CREATE TABLE ${twin} (id BIGINT, region STRING, v STRING) USING iceberg
           PARTITIONED BY (region)
           TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read',
                          'write.update.mode'='merge-on-read')`,
          `INSERT INTO ${twin} VALUES ${three(1)}`,
          `INSERT INTO ${twin} VALUES ${three(11)}`,
          `DELETE FROM ${twin} WHERE id % 7 = 0`,
          `INSERT INTO ${twin} VALUES ${rows(21, 10, 'eu')}`,
          `UPDATE ${twin} SET v = 'updated' WHERE region = 'ap' AND id % 3 = 0`,
          `CREATE TABLE ${deletesBefore(name)} USING iceberg AS
           SELECT file_path, partition.region AS region FROM ${twin}.delete_files`,
        ];
      }),
      `CREATE TABLE ${twinsExpected} USING iceberg AS
       SELECT * FROM ${sparkCatalog}.${namespace}.${DANGLING_TWINS[0]}`,
    ],
    SLOW,
  );
  afterPlainRewrite = await scan();
}, 2 * SPARK_TIMEOUT_MS);

afterAll(async () => {
  await sparkSql(
    infra,
    sparkCatalog,
    [
      `DROP TABLE IF EXISTS ${sqlName} PURGE`,
      `DROP TABLE IF EXISTS ${expectedName} PURGE`,
      ...[...EXPIRY_TWINS, ...DANGLING_TWINS].map(
        (name) => `DROP TABLE IF EXISTS ${sparkCatalog}.${namespace}.${name} PURGE`,
      ),
      ...DANGLING_TWINS.map((name) => `DROP TABLE IF EXISTS ${deletesBefore(name)} PURGE`),
      `DROP TABLE IF EXISTS ${twinsExpected} PURGE`,
      `DROP NAMESPACE IF EXISTS ${sparkCatalog}.${namespace}`,
    ],
    SLOW,
  );
}, 2 * SPARK_TIMEOUT_MS);

describe('dangling delete files on a real merge-on-read table', () => {
  it('counts the delete files left by a rewrite of every data file as dangling', async () => {
    const outcome = await catalog.loadTable(table);
    if (outcome.status !== 'loaded') throw new Error('expected a loaded table');
    const metadata = outcome.table.metadata;
    const snapshot = metadata.snapshots.find((s) => s.snapshotId === metadata.currentSnapshotId)!;
    // Still tracked by the snapshot (Iceberg's own total in the summary), …
    expect(snapshot.operation).toBe('replace');
    const tracked = Number(snapshot.summary['total-delete-files']);
    expect(tracked).toBeGreaterThan(0);
    expect(afterPlainRewrite.files.positionDeleteFiles).toBe(tracked);
    // … and each of them names a data file the rewrite removed: all dangling.
    expect(afterPlainRewrite.files.danglingDeletes).toEqual({
      positionDeleteFiles: tracked,
      equalityDeleteFiles: 0,
      deletionVectors: 0,
    });
  });

  it(
    'a merge by the job (Python 3.10) removes them: no delete file left, the same rows',
    async () => {
      const python = await pythonOfVersion('3.10');
      const exit = await runJob(mergeTask(afterPlainRewrite.tableUuid), python);
      expect(exit.code, exit.stderr).toBe(0);
      expect(exit.result).toMatchObject({
        ok: true,
        type: 'merge',
        removeDanglingDeleteFiles: {
          danglingPositionDeleteFilesFound: afterPlainRewrite.files.positionDeleteFiles,
        },
      });

      const after = await scan();
      expect(after.files.positionDeleteFiles + after.files.equalityDeleteFiles).toBe(0);
      expect(after.files.danglingDeletes).toEqual({
        positionDeleteFiles: 0,
        equalityDeleteFiles: 0,
        deletionVectors: 0,
      });
      // Spark reads exactly the rows the table held before any maintenance.
      await sparkSql(infra, sparkCatalog, [sameRowsSql(sqlName, expectedName)], SLOW);
    },
    3 * SPARK_TIMEOUT_MS,
  ); // spark-submit and the row check: two Spark sessions on two shared cores
});

describe('a small table expires in the driver, as Spark’s action would (ADR 0051)', () => {
  it(
    'the same snapshots left, the same files deleted and counted, the same rows',
    async () => {
      const runs: ExpiryRun[] = [];
      for (const [name, extra] of [
        ['expiry_driver', []],
        ['expiry_spark', ['--driver-expiry-max-files', '0']],
      ] as const) {
        const outcome = await catalog.loadTable({ ...table, name });
        if (outcome.status !== 'loaded') throw new Error(`expected ${name} loaded`);
        const before = outcome.table.metadata;
        const filesBefore = await filesOf(name);
        const exit = await runJob(forgedCleanup(name, before.tableUuid), infra.python, [...extra]);
        expect(exit.code, exit.stderr).toBe(0);
        const after = await catalog.loadTable({ ...table, name });
        if (after.status !== 'loaded') throw new Error(`expected ${name} loaded`);
        const filesAfter = await filesOf(name);
        const gone = [...filesBefore].filter((f) => !filesAfter.has(f));
        runs.push({ before, after: after.table.metadata, gone, result: exit.result });
      }
      const [driver, spark] = runs;
      expect(driver!.result.expireSnapshots).toMatchObject({ ranIn: 'driver' });
      expect(spark!.result.expireSnapshots).toMatchObject({ ranIn: 'spark' });
      const kinds = [
        'deletedDataFiles',
        'deletedPositionDeleteFiles',
        'deletedEqualityDeleteFiles',
        'deletedManifests',
        'deletedManifestLists',
        'deletedStatisticsFiles',
      ];
      const counts = (run: ExpiryRun): Record<string, number> =>
        Object.fromEntries(
          kinds.map((k) => [k, Number((run.result.expireSnapshots as Record<string, unknown>)[k])]),
        );
      // Every kind the twins hold is deleted: old data files, delete files, manifests, lists.
      expect(counts(driver!)).toEqual(counts(spark!));
      for (const k of [
        'deletedDataFiles',
        'deletedPositionDeleteFiles',
        'deletedManifests',
        'deletedManifestLists',
      ]) {
        expect(counts(driver!)[k], k).toBeGreaterThan(0);
      }
      for (const run of runs) {
        // The files reported are the files gone from the warehouse, no more …
        const reported = Object.values(counts(run)).reduce((a, b) => a + b, 0);
        expect(run.gone.length).toBe(reported);
        // … and only the current snapshot is left: the same one, the same rows.
        expect(run.after.snapshots.map((s) => s.snapshotId)).toEqual([
          run.before.currentSnapshotId,
        ]);
        expect(run.after.currentSnapshotId).toBe(run.before.currentSnapshotId);
      }
      expect(driver!.before.snapshots.length).toBe(spark!.before.snapshots.length);
      await sparkSql(
        infra,
        sparkCatalog,
        EXPIRY_TWINS.map((name) =>
          sameRowsSql(`${sparkCatalog}.${namespace}.${name}`, expectedName),
        ),
        SLOW,
      );
    },
    4 * SPARK_TIMEOUT_MS,
  ); // two spark-submits and the row check
});

describe('a small table’s merge removes its dangling deletes in the driver, as Spark’s actions would (ADR 0054)', () => {
  it(
    'the same counts, exactly the dangling delete files gone, the still-applying ones kept, the same rows',
    async () => {
      const region = (state: TableState, name: string): number =>
        state.partitions
          .filter((p) => p.partition.region === name)
          .reduce((sum, p) => sum + p.deleteFiles, 0);
      const runs: {
        before: TableState;
        after: TableState;
        result: Record<string, unknown>;
      }[] = [];
      for (const [name, extra] of [
        ['dangling_driver', []],
        ['dangling_spark', ['--driver-dangling-max-files', '0']],
      ] as const) {
        const id: TableId = { ...table, name };
        const load = async (): Promise<TableState> => {
          const outcome = await catalog.loadTable(id);
          if (outcome.status !== 'loaded') throw new Error(`expected ${name} loaded`);
          return computeTableState(outcome.table);
        };
        const before = await load();
        const task = {
          ...mergeTask(before.tableUuid),
          id: `merge/${sparkCatalog}/${namespace}/${name}`,
          table: id,
          parameters: {
            ...mergeTask(before.tableUuid).parameters,
            partitions: [[{ column: 'region', value: 'eu' }], [{ column: 'region', value: 'ap' }]],
          },
        };
        const exit = await runJob(task, infra.python, [...extra]);
        expect(exit.code, exit.stderr).toBe(0);
        runs.push({ before, after: await load(), result: exit.result });
      }
      const [driver, spark] = runs;
      type Dangling = {
        removedDeleteFiles: number;
        danglingPositionDeleteFilesFound: number;
        danglingDeleteFilesRemoved?: number;
        ranIn: string;
      };
      const byDriver = driver!.result.removeDanglingDeleteFiles as Dangling;
      const bySpark = spark!.result.removeDanglingDeleteFiles as Dangling;
      expect(byDriver.ranIn).toBe('driver');
      expect(bySpark.ranIn).toBe('spark');
      // Both of Spark's steps had work (the sequence rule in `eu`, removed files named in `ap`),
      // and the driver counts its finds as they do.
      expect(bySpark.removedDeleteFiles).toBeGreaterThan(0);
      expect(bySpark.danglingPositionDeleteFilesFound).toBeGreaterThan(0);
      expect(byDriver.removedDeleteFiles).toBe(bySpark.removedDeleteFiles);
      expect(byDriver.danglingPositionDeleteFilesFound).toBe(
        bySpark.danglingPositionDeleteFilesFound,
      );
      expect(spark!.result.rewritePositionDeleteFiles).toMatchObject({
        rewrittenDeleteFiles: bySpark.danglingPositionDeleteFilesFound,
        addedDeleteFiles: 0,
      });
      expect(driver!.result.rewritePositionDeleteFiles).toBeUndefined();
      expect(driver!.result.commits).toEqual(
        expect.objectContaining({
          deleteFilesRemoved: (spark!.result.commits as { deleteFilesRemoved: number })
            .deleteFilesRemoved,
        }),
      );
      for (const run of runs) {
        // Every delete file of the merged partitions dangled and is gone; `us` keeps its own.
        const merged = region(run.before, 'eu') + region(run.before, 'ap');
        expect(region(run.before, 'us')).toBeGreaterThan(0);
        expect(run.before.files.danglingDeletes.positionDeleteFiles).toBe(0);
        expect(region(run.after, 'eu') + region(run.after, 'ap')).toBe(0);
        expect(region(run.after, 'us')).toBe(region(run.before, 'us'));
        expect(run.after.files.danglingDeletes).toEqual({
          positionDeleteFiles: 0,
          equalityDeleteFiles: 0,
          deletionVectors: 0,
        });
        expect(run.after.files.positionDeleteFiles).toBe(region(run.before, 'us'));
        if (run === driver) expect(byDriver.danglingDeleteFilesRemoved).toBe(merged);
      }
      // The delete files left are exactly `us`'s from before, by path; the rows are unchanged.
      await sparkSql(
        infra,
        sparkCatalog,
        DANGLING_TWINS.flatMap((name) => {
          const twin = `${sparkCatalog}.${namespace}.${name}`;
          const kept = `SELECT file_path FROM ${deletesBefore(name)} WHERE region = 'us'`;
          return [
            sameRowsSql(
              `(SELECT file_path FROM ${twin}.delete_files) AS left_now`,
              `(${kept}) AS kept`,
            ),
            sameRowsSql(twin, twinsExpected),
          ];
        }),
        SLOW,
      );
    },
    4 * SPARK_TIMEOUT_MS,
  ); // two spark-submits and the row check
});

describe('the job trusts the table it loads, not the task (issue 16)', () => {
  it(
    'a forged zero retention expires nothing the table’s own retention keeps: no commit at all',
    async () => {
      const before = await scan();
      expect(before.snapshots.total).toBeGreaterThan(1);
      const startedAt = Date.now();
      const exit = await runJob(forgedCleanup('customers', before.tableUuid), infra.python);
      const endedAt = Date.now();
      expect(exit.code, exit.stderr).toBe(0);
      const applied = exit.result.expireSnapshots as { olderThan: string; retainLast: number };
      // The table's one day, not the task's "now": a cutoff between the run's bounds minus a day.
      expect(Date.parse(applied.olderThan)).toBeGreaterThanOrEqual(startedAt - DAY_MS);
      expect(Date.parse(applied.olderThan)).toBeLessThanOrEqual(endedAt - DAY_MS);
      expect(applied.retainLast).toBe(1);
      const after = await scan();
      expect(after.metadataLocation).toBe(before.metadataLocation);
      expect(after.snapshots.total).toBe(before.snapshots.total);
      expect(exit.result.expireSnapshots).toMatchObject({
        deletedDataFiles: 0,
        deletedManifestLists: 0,
      });
    },
    2 * SPARK_TIMEOUT_MS,
  );

  it(
    'a table dropped and recreated under the task’s name is refused, and left as it is',
    async () => {
      const old = await catalog.loadTable({ ...table, name: 'expected' });
      if (old.status !== 'loaded') throw new Error('expected a loaded table');
      // Dropped and created again under the same name through the catalog's REST API.
      expect(
        (await fetch(`${tableUrl('expected')}?purgeRequested=true`, { method: 'DELETE' })).ok,
      ).toBe(true);
      const created = await fetch(
        `${infra.catalogUri}/v1/namespaces/${encodeURIComponent(namespace)}/tables`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            name: 'expected',
            schema: {
              type: 'struct',
              'schema-id': 0,
              fields: [{ id: 1, name: 'id', type: 'long', required: false }],
            },
          }),
        },
      );
      expect(created.ok, await created.clone().text()).toBe(true);
      const recreated = await catalog.loadTable({ ...table, name: 'expected' });
      if (recreated.status !== 'loaded') throw new Error('expected a loaded table');
      expect(recreated.table.metadata.tableUuid).not.toBe(old.table.metadata.tableUuid);

      const exit = await runJob(
        forgedCleanup('expected', old.table.metadata.tableUuid),
        infra.python,
      );
      expect(exit.code, exit.stderr).toBe(6);
      expect(exit.result).toMatchObject({
        ok: false,
        error: { kind: 'refused', retryable: false },
      });
      const message = (exit.result.error as { message: string }).message;
      expect(message).toContain(old.table.metadata.tableUuid);
      expect(message).toContain(recreated.table.metadata.tableUuid);
      const now = await catalog.loadTable({ ...table, name: 'expected' });
      expect(now.status === 'loaded' && now.table.metadataLocation).toBe(
        recreated.table.metadataLocation,
      );
    },
    2 * SPARK_TIMEOUT_MS,
  );
});
