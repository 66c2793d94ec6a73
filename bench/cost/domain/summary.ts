/**
 * The cost benchmark's figures (docs/cost-bench.md): per run, the cost of small-table and
 * large-table tasks, the data check, and the comparison of modes per task. Pure: no I/O.
 */
import type { TaskRow } from '../../lake-sim/domain/ledger.ts';
import type { BatchMode, Sizing } from './options.ts';

export type SizeClass = 'small' | 'large';

/** A table's figures as Spark read them (bench/cost/tables.py). */
export interface TableFigures {
  readonly rows: number;
  /** Sum of the rows' 64-bit hashes, as a decimal string: order-independent. */
  readonly checksum: string;
  readonly dataFiles: number;
  readonly bytes: number;
  readonly snapshots: number;
}

export interface TableCheck {
  readonly table: string;
  readonly size: SizeClass;
  readonly before: TableFigures;
  readonly after?: TableFigures;
}

export interface CostRun {
  readonly mode: BatchMode;
  readonly sizing: Sizing;
  readonly catalog: string;
  readonly machine: string;
  readonly startedAt: string;
  readonly endedAt: string;
  /** Seconds the tables took to create (not counted in the cost). */
  readonly createSeconds: number;
  /** From the services' start to the queue drained (or the cap). */
  readonly maintainMs: number;
  readonly drained: boolean;
  readonly tables: readonly TableCheck[];
  readonly rows: readonly TaskRow[];
  /** Each way a Spark job ran twice (lake-sim's `duplicateRuns`). */
  readonly duplicates: readonly string[];
  /** The sizing model the dispatcher published at the end, as JSON; absent when none. */
  readonly model?: unknown;
}

export interface ClassCost {
  readonly tables: number;
  /** Task runs (one row per task and run, batch members each their own). */
  readonly runs: number;
  readonly byOutcome: Readonly<Record<string, number>>;
  readonly byType: Readonly<Record<string, number>>;
  readonly coreSecondsRequested: number;
  readonly coreSecondsUsed: number;
  /** Succeeded runs whose ledger carried the CPU used (the others add nothing to it). */
  readonly runsWithUsed: number;
  readonly killedForMemory: number;
  /** First start to last end of the class's runs. */
  readonly spanMs: number;
  /** Per run: requested and used core-seconds; absent without runs. */
  readonly perRun?: { readonly requested: number; readonly used?: number };
}

/** `small_0001` → small; the tables' names say their class (bench/cost/tables.py). */
export function classOf(table: string): SizeClass {
  return /(^|\.)large_/.test(table) ? 'large' : 'small';
}

const countBy = (values: readonly string[]): Record<string, number> =>
  Object.fromEntries([...Map.groupBy(values, (v) => v)].map(([k, v]) => [k, v.length]));

/** A run ended by the job's or the kernel's out-of-memory kill (ADR 0026: kind `out-of-memory`). */
export const killedForMemory = (row: TaskRow): boolean =>
  row.error?.startsWith('out-of-memory') === true;

export function classCost(run: CostRun, size: SizeClass): ClassCost {
  const rows = run.rows.filter((r) => classOf(r.table) === size);
  const requested = rows.reduce((n, r) => n + (r.coreSecondsRequested ?? 0), 0);
  const withUsed = rows.filter((r) => r.coreSecondsUsed !== undefined);
  const used = withUsed.reduce((n, r) => n + r.coreSecondsUsed!, 0);
  const starts = rows.map((r) => r.startedAt);
  const ends = rows.flatMap((r) => (r.endedAt === undefined ? [] : [r.endedAt]));
  return {
    tables: run.tables.filter((t) => t.size === size).length,
    runs: rows.length,
    byOutcome: countBy(rows.map((r) => r.outcome)),
    byType: countBy(rows.map((r) => r.type)),
    coreSecondsRequested: requested,
    coreSecondsUsed: used,
    runsWithUsed: withUsed.length,
    killedForMemory: rows.filter(killedForMemory).length,
    spanMs: starts.length === 0 || ends.length === 0 ? 0 : Math.max(...ends) - Math.min(...starts),
    ...(rows.length === 0
      ? {}
      : {
          perRun: {
            requested: requested / rows.length,
            ...(withUsed.length === 0 ? {} : { used: used / withUsed.length }),
          },
        }),
  };
}

/**
 * Every table whose rows or checksum differ after maintenance, or that was not read after it,
 * as a sentence. Empty: the data is identical.
 */
export function dataMismatches(tables: readonly TableCheck[]): string[] {
  return tables.flatMap((t) => {
    if (t.after === undefined) return [`${t.table}: not read after maintenance`];
    if (t.after.rows !== t.before.rows || t.after.checksum !== t.before.checksum) {
      return [
        `${t.table}: ${String(t.before.rows)} rows (checksum ${t.before.checksum}) before, ${String(t.after.rows)} rows (checksum ${t.after.checksum}) after`,
      ];
    }
    return [];
  });
}

/** Tables whose data files or snapshots maintenance reduced. */
export function maintainedTables(tables: readonly TableCheck[]): number {
  return tables.filter(
    (t) =>
      t.after !== undefined &&
      (t.after.dataFiles < t.before.dataFiles || t.after.snapshots < t.before.snapshots),
  ).length;
}

/** Why the run is broken, each as a sentence; empty when it is sound. */
export function problems(run: CostRun): string[] {
  const succeeded = run.rows.filter((r) => r.outcome === 'succeeded').length;
  return [
    ...dataMismatches(run.tables),
    ...run.duplicates,
    ...(succeeded === 0 ? ['no task succeeded: nothing was measured'] : []),
    ...(run.drained ? [] : ['the queue did not drain within the settle cap']),
  ];
}

/**
 * How many times fewer core-seconds per small-table task `better` cost than `baseline`
 * (`used` when both carry it, else requested); undefined without runs on either side.
 * Per task, never per total: the single mode maintains a sample of the small tables.
 */
export function perTaskSaving(
  baseline: ClassCost,
  better: ClassCost,
): { readonly by: 'used' | 'requested'; readonly factor: number } | undefined {
  const a = baseline.perRun;
  const b = better.perRun;
  if (a === undefined || b === undefined) return undefined;
  if (a.used !== undefined && b.used !== undefined && b.used > 0) {
    return { by: 'used', factor: a.used / b.used };
  }
  return b.requested > 0 ? { by: 'requested', factor: a.requested / b.requested } : undefined;
}

/** `runs` per-task core-seconds extrapolated to `tasks` tasks (labelled so in the report). */
export const extrapolate = (perRun: number, tasks: number): number => perRun * tasks;

/** The median of `values`; undefined when empty. */
export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** What large-table merges cost per run: their count and medians (absent without runs). */
export interface LargeMerges {
  readonly runs: number;
  readonly medianRunSeconds?: number;
  readonly medianCpuSeconds?: number;
  /** Cores the run was sized for: core-seconds requested ÷ run time. */
  readonly medianCores?: number;
}

/**
 * The succeeded large-table merges of `runs` (one pass or several of one mode and sizing,
 * pooled): the figure issue 18 compares between learned and fixed sizing ("large tables no
 * slower"). Cleanups are left out: their work does not depend on the sizing.
 */
export function largeMerges(runs: readonly CostRun[]): LargeMerges {
  const rows = runs.flatMap((r) =>
    r.rows.filter(
      (x) =>
        classOf(x.table) === 'large' &&
        x.type === 'merge' &&
        x.outcome === 'succeeded' &&
        x.runMs !== undefined,
    ),
  );
  const runSeconds = rows.map((x) => x.runMs! / 1000);
  const cpu = rows.flatMap((x) => (x.coreSecondsUsed === undefined ? [] : [x.coreSecondsUsed]));
  const cores = rows.flatMap((x) =>
    x.coreSecondsRequested === undefined || x.runMs! <= 0
      ? []
      : [x.coreSecondsRequested / (x.runMs! / 1000)],
  );
  const m = (values: number[]) => median(values);
  return {
    runs: rows.length,
    ...(m(runSeconds) === undefined ? {} : { medianRunSeconds: m(runSeconds) }),
    ...(m(cpu) === undefined ? {} : { medianCpuSeconds: m(cpu) }),
    ...(m(cores) === undefined ? {} : { medianCores: m(cores) }),
  };
}

/** The machine's mean 1-minute load while maintaining, as the run recorded it; else undefined. */
export function meanLoad(run: CostRun): number | undefined {
  const match = /load average while maintaining: mean ([\d.]+)/.exec(run.machine);
  return match === null ? undefined : Number(match[1]);
}
