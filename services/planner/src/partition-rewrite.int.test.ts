// Partition-scoped plans on real Spark (issue 17 point 2): real tables in the REST catalog, the
// scanner's state, the planner's plan, and the job's own rewrite with the task's partition
// filter — all in ONE Spark session (testing/partition_rewrite.py, which runs each task as the
// job's main does), for identity, day, hour and bucket partitioning and a table whose spec
// evolved; a merge of a table with one spec removes its dangling deletes in the driver, of the
// evolved table with Spark's actions (ADR 0054). Only the chosen partitions' files change;
// every row stays; a merge fired by the commit count alone changes the table. Also z-order and Hilbert rewrites (issue 17 point 4), verified by a
// data-skipping measure: for range predicates on each layout column, how many files' min/max
// ranges overlap; and a Hilbert rewrite that meets a concurrent delete fails its commit's
// validation instead of bringing the deleted rows back (ADR 0033).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { computeTableState, RestCatalog } from '@icepack/iceberg';
import { resolvePolicy, type PolicySettings } from '@icepack/policy';
import { infraEnv } from '@icepack/test';
import {
  expandPartitionSets,
  type PartitionSpecState,
  type PartitionState,
  type TableId,
  type TableState,
  type Task,
} from '@icepack/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planTable } from './domain/plan.ts';

const infra = infraEnv();
const catalogName = 'c4parts';
const namespace = `parts_${randomUUID().slice(0, 8)}`;
const rest = new RestCatalog({ name: catalogName, uri: infra.catalogUri });
const driverScript = resolve(import.meta.dirname, 'testing', 'partition_rewrite.py');

interface FileRow {
  readonly path: string;
  readonly specId: number;
  readonly partition: Record<string, unknown>;
  /** The layout tables' files: lower and upper bound per layout column. */
  readonly bounds?: Record<string, readonly [number, number]>;
}
interface TableSnapshot {
  readonly files: readonly FileRow[];
  /** The table's live delete files. */
  readonly deleteFiles: number;
  readonly rows: number;
  readonly checksum: string;
}
interface RewriteReply {
  readonly before: TableSnapshot;
  readonly after: TableSnapshot;
  readonly result: {
    rewriteDataFiles: { rewrittenDataFiles: number };
    /** Where the dangling-delete removal ran (ADR 0054). */
    removeDanglingDeleteFiles: {
      ranIn: 'driver' | 'spark';
      removedDeleteFiles: number;
      danglingPositionDeleteFilesFound?: number;
      danglingDeleteFilesRemoved?: number;
    };
  };
  readonly error?: string;
}

interface ConflictReply {
  readonly before: TableSnapshot;
  readonly after: TableSnapshot;
  /** The job's result for the rewrite's error; null when the rewrite committed. */
  readonly failure: {
    exitCode: number;
    error: { kind: string; message: string; retryable: boolean };
  } | null;
  /** Rows the concurrent delete removed; the checksum of the rows it kept (before). */
  readonly deleted: number;
  readonly keptChecksum: string;
  /** Rows with `id < below` in the table afterwards. */
  readonly leftBelow: number;
}

/** The driver: one Spark session, one JSON line per message. */
class Driver {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #lines: AsyncIterator<string>;
  #stderr = '';

  constructor() {
    this.#child = spawn(
      infra.python,
      [
        driverScript,
        '--catalog-uri',
        infra.catalogUri,
        '--catalog-name',
        catalogName,
        '--namespace',
        namespace,
      ],
      { env: { ...process.env, ICEPACK_SPARK_JARS: infra.sparkJars } },
    );
    this.#child.stderr.on('data', (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString()).slice(-4000);
    });
    this.#lines = createInterface({ input: this.#child.stdout })[Symbol.asyncIterator]();
  }

  async next<T>(): Promise<T> {
    for (;;) {
      const line = await this.#lines.next();
      if (line.done === true) throw new Error(`the Spark driver ended:\n${this.#stderr}`);
      if (line.value.startsWith('@@ ')) return JSON.parse(line.value.slice(3)) as T;
    }
  }

  /** Runs `task` as the job's main does; `sparkDangling`: with `--driver-dangling-max-files 0`. */
  async rewrite(task: Task, sparkDangling = false): Promise<RewriteReply> {
    this.#child.stdin.write(`${JSON.stringify({ task, sparkDangling })}\n`);
    const reply = await this.next<RewriteReply>();
    if (reply.error !== undefined) throw new Error(reply.error);
    return reply;
  }

  /** The job's Hilbert rewrite of `task` with a writer's `DELETE … WHERE id < below` between
   * its writing and its commit. */
  async rewriteAgainstDelete(task: Task, below: number): Promise<ConflictReply> {
    this.#child.stdin.write(`${JSON.stringify({ task, concurrentDelete: below })}\n`);
    const reply = await this.next<ConflictReply & { error?: string }>();
    if (reply.error !== undefined) throw new Error(reply.error);
    return reply;
  }

  /** The Hilbert index of each cell by Spark SQL and by the job's Python reference. */
  async hilbertPoints(points: readonly (readonly [number, number])[]) {
    this.#child.stdin.write(`${JSON.stringify({ hilbertPoints: points })}\n`);
    return this.next<{ sql: number[]; python: number[] }>();
  }

  async stop(): Promise<void> {
    this.#child.stdin.end('\n');
    await new Promise((r) => this.#child.once('close', r));
  }
}

const id = (name: string): TableId => ({ catalog: catalogName, namespace: [namespace], name });

/** A partition as `specId|field=value|…` over its spec's fields: the files' and the state's alike. */
function keyOf(
  specs: ReadonlyMap<number, PartitionSpecState>,
  specId: number,
  values: Record<string, unknown>,
) {
  const fields = specs.get(specId)?.fields ?? [];
  return [
    specId,
    ...fields.map(
      (f) =>
        `${f.name}=${values[f.name] === undefined || values[f.name] === null ? 'null' : String(values[f.name])}`,
    ),
  ].join('|');
}

async function scan(name: string): Promise<TableState> {
  const outcome = await rest.loadTable(id(name));
  if (outcome.status !== 'loaded') throw new Error('expected a loaded table');
  return computeTableState(outcome.table);
}

function plan(state: TableState, settings: PolicySettings) {
  const { policy, problems } = resolvePolicy(state.properties, { catalog: settings });
  expect(problems).toEqual([]);
  return planTable({ state, policy, pending: {}, now: new Date() });
}

let driver: Driver;

beforeAll(async () => {
  driver = new Driver();
  await driver.next<{ ready: true }>();
}, 10 * 60_000);

// The driver drops its tables and namespace when it stops.
afterAll(async () => {
  await driver?.stop();
});

/**
 * Plans the table with `settings`, runs the merge task of `group` through the job's rewrite,
 * and checks: the files of the task's partitions were rewritten, every other file is the same,
 * new files lie in the task's partitions, and the rows are unchanged.
 */
async function rewriteChecked(
  name: string,
  settings: PolicySettings,
  group = 1,
  check?: (before: TableSnapshot, after: TableSnapshot) => void,
  sparkDangling = false,
): Promise<{
  chosen: readonly PartitionState[];
  state: TableState;
  result: RewriteReply['result'];
  before: TableSnapshot;
  after: TableSnapshot;
}> {
  const state = await scan(name);
  const p = plan(state, settings);
  const g = p.scope.groups.find((x) => x.group === group);
  expect(g, p.scope.reason).toBeDefined();
  const decision = p.decisions.find((d) => d.type === 'merge' && d.group === group);
  expect(decision?.action).toBe('create');
  const task = decision!.task!;
  // The task names the group's partitions in compact form (one set per spec; order free).
  const named = task.type === 'merge' ? expandPartitionSets(task.parameters.partitionSets!) : [];
  expect(named.map((f) => JSON.stringify(f)).sort()).toEqual(
    g!.filter.map((f) => JSON.stringify(f)).sort(),
  );

  const specs = new Map<number, PartitionSpecState>(
    [state.partitionSpec, ...(state.otherPartitionSpecs ?? [])].map((s) => [s.specId, s]),
  );
  const chosen = new Set(g!.partitions.map((x) => keyOf(specs, x.specId, x.partition)));
  const reply = await driver.rewrite(task, sparkDangling);
  const { before, after } = reply;
  const afterPaths = new Set(after.files.map((f) => f.path));
  const beforePaths = new Set(before.files.map((f) => f.path));
  const inChosen = (f: FileRow) => chosen.has(keyOf(specs, f.specId, f.partition));

  expect(before.files.filter(inChosen).length).toBeGreaterThan(0);
  expect(reply.result.rewriteDataFiles.rewrittenDataFiles).toBe(
    before.files.filter(inChosen).length,
  );
  // Every file of the chosen partitions was replaced, every other file kept.
  for (const f of before.files) expect(afterPaths.has(f.path), f.path).toBe(!inChosen(f));
  // The new files hold the chosen partitions' rows and nothing else.
  const added = after.files.filter((f) => !beforePaths.has(f.path));
  expect(added.length).toBeGreaterThan(0);
  for (const f of added) expect(inChosen(f), JSON.stringify(f)).toBe(true);
  expect(after.rows).toBe(before.rows);
  expect(after.checksum).toBe(before.checksum);
  check?.(before, after);
  return { chosen: g!.partitions, state, result: reply.result, before, after };
}

describe('partition-scoped rewrites on real Spark', () => {
  it('identity partitioning, selected: only region=eu is rewritten', async () => {
    const { chosen, result } = await rewriteChecked('by_region', {
      'icepack.merge.strategy': 'selected:region=eu',
    });
    expect(chosen.map((x) => x.partition)).toEqual([{ region: 'eu' }]);
    expect(result.removeDanglingDeleteFiles.ranIn).toBe('driver');
  });

  it('day partitioning, recent:1: only the newest day is rewritten', async () => {
    const { chosen, result } = await rewriteChecked('by_day', {
      'icepack.merge.strategy': 'recent:1',
    });
    expect(chosen.map((x) => x.partition)).toEqual([{ ts_day: '2026-01-03' }]);
    expect(result.removeDanglingDeleteFiles.ranIn).toBe('driver');
  });

  it('hour partitioning, recent:2: the two newest hours are rewritten', async () => {
    const { chosen, result } = await rewriteChecked('by_hour', {
      'icepack.merge.strategy': 'recent:2',
    });
    expect(chosen).toHaveLength(2);
    expect(result.removeDanglingDeleteFiles.ranIn).toBe('driver');
  });

  it('bucket partitioning, selected: only bucket 1 is rewritten', async () => {
    const { chosen, result } = await rewriteChecked('by_bucket', {
      'icepack.merge.strategy': 'selected:id_bucket=1',
    });
    expect(chosen.map((x) => x.partition)).toEqual([{ id_bucket: '1' }]);
    expect(result.removeDanglingDeleteFiles.ranIn).toBe('driver');
  });

  it('max-commits below the file thresholds: the merge lowers min-input-files and changes the table (ADR 0044)', async () => {
    // 3 commits, 3 small files in each of 3 partitions: 9 ≤ 20 small files, each partition
    // below the policy's min-input-files (5). Only the commit count fires the merge.
    const settings = { 'icepack.merge.max-commits': '3' };
    const state = await scan('by_commits');
    expect(state.snapshots.sinceLastRewrite).toBe(3);
    expect(state.partitions.map((x) => x.smallFiles)).toEqual([3, 3, 3]);
    const task = plan(state, settings).decisions.find((d) => d.type === 'merge')?.task;
    expect(task?.type === 'merge' && task.parameters.minInputFiles).toBe(2);
    // With the policy's min-input-files, as planned before, Iceberg picks no file group: the
    // Spark run changes nothing.
    const unchanged = await driver.rewrite({
      ...task!,
      parameters: { ...task!.parameters, minInputFiles: 5 },
    } as Task);
    expect(unchanged.result.rewriteDataFiles.rewrittenDataFiles).toBe(0);
    expect(unchanged.after.files.map((f) => f.path).sort()).toEqual(
      unchanged.before.files.map((f) => f.path).sort(),
    );
    // The planned task: every partition's small files become one file, the rows the same.
    const { chosen } = await rewriteChecked('by_commits', settings, 1, (before, after) => {
      expect(before.files).toHaveLength(9);
      expect(after.files).toHaveLength(3);
    });
    expect(chosen.map((x) => x.partition['region']).sort()).toEqual(['apac', 'eu', 'us']);
  });

  it('max-commits after a rewrite: the merge rewrites only the partitions the commits wrote (ADR 0047)', async () => {
    // us and apac hold 2 small files each from before an Iceberg rewrite of eu; the 3 commits
    // since wrote eu only. Iceberg's rewrite keeps its starting sequence number for the files it
    // wrote, so only eu's last sequence number is above the rewrite's.
    const settings = { 'icepack.merge.max-commits': '3' };
    const state = await scan('by_since');
    expect(state.snapshots.sinceLastRewrite).toBe(3);
    const since = BigInt(state.newData.sinceSequenceNumber!);
    const changed = state.partitions
      .filter((x) => BigInt(x.lastSequenceNumber!) > since)
      .map((x) => x.partition['region']);
    expect(changed).toEqual(['eu']);
    expect(state.partitions.map((x) => [x.partition['region'], x.smallFiles]).sort()).toEqual([
      ['apac', 2],
      ['eu', 4],
      ['us', 2],
    ]);
    // Every partition holds ≥ 2 small files (the lowered min-input-files); only eu is rewritten,
    // us and apac keep their files.
    const { chosen } = await rewriteChecked('by_since', settings, 1, (before, after) => {
      expect(before.files).toHaveLength(8);
      expect(after.files).toHaveLength(5);
    });
    expect(chosen.map((x) => x.partition['region'])).toEqual(['eu']);
  });

  it('a sort of a table spread thin: none planned, and the task planned before changes nothing in Iceberg', async () => {
    // One small file in each of 6 day partitions: the table's count (6 > 2) and its new data
    // fire the sort rule; Iceberg's sort planner picks no file group in any partition.
    const state = await scan('sort_thin');
    expect(state.partitions.map((x) => x.smallFiles)).toEqual([1, 1, 1, 1, 1, 1]);
    const sort = plan(state, {}).decisions.filter((d) => d.type === 'sort');
    expect(sort.map((d) => d.action)).toEqual(['none']);
    expect(sort[0]!.reason).toMatch(/^files spread thin: .*would change nothing/);
    // The task planned before (as now when not every such partition is listed): a table-wide sort.
    const unlisted = {
      ...state,
      partitionTotals: { ...state.partitionTotals!, needingWork: 100 },
    };
    const task = plan(unlisted, {}).decisions.find(
      (d) => d.type === 'sort' && d.action === 'create',
    )?.task;
    expect(task?.type === 'sort' && task.parameters.strategy).toBe('sort');
    const reply = await driver.rewrite(task!);
    expect(reply.result.rewriteDataFiles.rewrittenDataFiles).toBe(0);
    expect(reply.after.files.map((f) => f.path).sort()).toEqual(
      reply.before.files.map((f) => f.path).sort(),
    );
  });

  it('an evolved spec, split into one task per partition: the first task rewrites only its partition', async () => {
    const { chosen, state, result } = await rewriteChecked('evolved', {
      'icepack.max-bytes-per-task': '1',
    });
    expect(state.otherPartitionSpecs?.map((s) => s.specId)).toEqual([0]);
    // Two specs: the driver does not judge the dangling deletes, Spark's actions do.
    expect(result.removeDanglingDeleteFiles.ranIn).toBe('spark');
    // Newest first: a partition of the current spec (region and day).
    expect(chosen).toHaveLength(1);
    expect(chosen[0]!.specId).toBe(state.partitionSpec.specId);
    expect(Object.keys(chosen[0]!.partition)).toEqual(['region', 'ts_day']);
  });

  it.each([
    ['dangling_day', { 'icepack.merge.strategy': 'recent:1' }],
    ['dangling_bucket', { 'icepack.merge.strategy': 'selected:id_bucket=2' }],
  ] as const)(
    '%s: the merge removes its dangling deletes in the driver, as Spark’s actions do on its twin (ADR 0054)',
    async (name, settings) => {
      const driverRun = await rewriteChecked(name, settings);
      const sparkRun = await rewriteChecked(`${name}_spark`, settings, 1, undefined, true);
      const byDriver = driverRun.result.removeDanglingDeleteFiles;
      const bySpark = sparkRun.result.removeDanglingDeleteFiles;
      expect(byDriver.ranIn).toBe('driver');
      expect(bySpark.ranIn).toBe('spark');
      // The file-scoped deletes of the rewritten files (the merged partition holds deleted
      // rows: bucket 1 holds none): found, and counted as Spark counts them.
      expect(bySpark.danglingPositionDeleteFilesFound).toBeGreaterThan(0);
      expect(byDriver.removedDeleteFiles).toBe(bySpark.removedDeleteFiles);
      expect(byDriver.danglingPositionDeleteFilesFound).toBe(
        bySpark.danglingPositionDeleteFilesFound,
      );
      expect(byDriver.danglingDeleteFilesRemoved).toBe(
        bySpark.removedDeleteFiles + bySpark.danglingPositionDeleteFilesFound!,
      );
      // The same delete files left on both twins: those of the partitions not merged.
      expect(driverRun.before.deleteFiles).toBe(sparkRun.before.deleteFiles);
      expect(driverRun.after.deleteFiles).toBe(sparkRun.after.deleteFiles);
      expect(driverRun.after.deleteFiles).toBeLessThan(driverRun.before.deleteFiles);
    },
  );
});

/**
 * Data skipping for `column`: over ten range predicates `lo ≤ column ≤ lo + 99` covering
 * [0, 1000), the mean share of the files whose [lower, upper] bound range overlaps the predicate
 * — the share of files a reader must open. 1 is no skipping at all.
 */
function overlapShare(files: readonly FileRow[], column: string): number {
  let overlapping = 0;
  for (let lo = 0; lo < 1000; lo += 100) {
    const hi = lo + 99;
    for (const f of files) {
      const range = f.bounds?.[column];
      if (range === undefined) throw new Error(`no bounds of ${column} for ${f.path}`);
      if (range[0] <= hi && range[1] >= lo) overlapping += 1;
    }
  }
  return overlapping / (10 * files.length);
}

/** The share of files a range predicate opens, per layout column, before and after. */
function skipping(before: TableSnapshot, after: TableSnapshot) {
  return Object.fromEntries(
    ['x', 'y'].map((c) => [
      c,
      { before: overlapShare(before.files, c), after: overlapShare(after.files, c) },
    ]),
  );
}

/** The sort task the planner makes for table `name` under `settings`, of `strategy`. */
async function plannedSort(
  name: string,
  settings: PolicySettings,
  strategy: 'zorder' | 'hilbert',
): Promise<Task> {
  const p = plan(await scan(name), settings);
  const decision = p.decisions.find((d) => d.type === 'sort');
  expect(decision?.action, decision?.reason).toBe('create');
  const task = decision!.task!;
  expect(task.type === 'sort' && task.parameters.strategy).toBe(strategy);
  return task;
}

/**
 * Runs the planned layout rewrite of table `name` through the job and checks: every old file
 * replaced, rows and checksum unchanged, and for range predicates on each layout column a
 * smaller share of files to open than before.
 */
async function layoutRewriteChecked(
  name: string,
  settings: PolicySettings,
  strategy: 'zorder' | 'hilbert',
): Promise<void> {
  const task = await plannedSort(name, settings, strategy);
  const { before, after, result } = await driver.rewrite(task);
  expect(result.rewriteDataFiles.rewrittenDataFiles).toBe(before.files.length);
  expect(after.rows).toBe(before.rows);
  expect(after.checksum).toBe(before.checksum);
  const old = new Set(before.files.map((f) => f.path));
  expect(after.files.filter((f) => old.has(f.path))).toEqual([]);
  // Several files after it, or the measure says nothing: one file always overlaps.
  expect(after.files.length).toBeGreaterThan(1);
  const measured = skipping(before, after);
  // Before: every small file holds rows from the whole range of both columns.
  for (const c of ['x', 'y']) {
    expect(measured[c]!.before, JSON.stringify(measured)).toBeGreaterThan(0.9);
    expect(measured[c]!.after, JSON.stringify(measured)).toBeLessThan(measured[c]!.before);
  }
  console.log(
    `${strategy} data skipping (share of files a range predicate opens): ${JSON.stringify({ filesBefore: before.files.length, filesAfter: after.files.length, ...measured })}`,
  );
}

describe('a z-order rewrite on real Spark', () => {
  it('succeeds, keeps every row, and lets range predicates on each column skip files', async () => {
    await layoutRewriteChecked('zordered', { 'icepack.zorder.columns': 'x,y' }, 'zorder');
  });
});

describe('a Hilbert-curve rewrite on real Spark (ADR 0033)', () => {
  it("the job's Spark SQL index is the Hilbert curve's, as its Python reference computes it", async () => {
    const last = 65_535;
    const points = [
      [0, 0],
      [1, 0],
      [0, 1],
      [last, 0],
      [last, last],
      [12_345, 54_321],
      [40_000, 3],
      [7, 65_000],
      [32_768, 32_767],
    ] as const;
    const { sql, python } = await driver.hilbertPoints(points);
    expect(sql).toEqual(python);
    // The curve's ends: it starts at the origin and ends in the corner (last, 0).
    expect(sql[0]).toBe(0);
    expect(sql[3]).toBe(2 ** 32 - 1);
  });

  it('succeeds through the planned task, keeps every row, and lets range predicates on each column skip files', async () => {
    await layoutRewriteChecked('hilberted', { 'icepack.hilbert.columns': 'x,y' }, 'hilbert');
  });

  it('a delete committed while it writes fails its commit as a conflict; the deleted rows stay deleted', async () => {
    const task = await plannedSort(
      'hilbert_conflict',
      { 'icepack.hilbert.columns': 'x,y' },
      'hilbert',
    );
    const reply = await driver.rewriteAgainstDelete(task, 100);
    // Iceberg's validation from the starting snapshot found the position deletes of files the
    // rewrite replaces: the job reports a retryable commit conflict.
    expect(reply.failure?.error.kind, JSON.stringify(reply.failure)).toBe('commit-conflict');
    expect(reply.failure?.error.retryable).toBe(true);
    expect(reply.failure?.error.message).toMatch(/found new position delete/i);
    // The table is the writer's: its data files untouched by the rewrite, its 100 rows gone,
    // every other row as it was.
    expect(reply.deleted).toBe(100);
    expect(reply.leftBelow).toBe(0);
    expect(reply.after.rows).toBe(reply.before.rows - 100);
    expect(reply.after.checksum).toBe(reply.keptChecksum);
    expect(reply.after.files.map((f) => f.path).sort()).toEqual(
      reply.before.files.map((f) => f.path).sort(),
    );
  });
});
