/** What one simulator run recorded, and the invariants checked on it. Pure: no I/O. */
import type { Policy, Workload } from './options.ts';
import type { TailSummary, TaskRow, TaskTime } from './ledger.ts';

/** One table's figures at one moment (seconds since the writers started). */
export interface Sample {
  readonly t: number;
  readonly table: string;
  readonly dataFiles: number;
  readonly smallFiles: number;
  /** Position + equality delete files + deletion vectors (live and dangling alike). */
  readonly deleteFiles: number;
  readonly snapshots: number;
  /** Bytes under the table's `metadata/` directory (metadata JSON, manifest lists, manifests). */
  readonly metadataBytes: number;
}

export interface TableInfo {
  readonly name: string;
  readonly kind: string;
  readonly periodSeconds: number;
  readonly actions: number;
}

export interface WriterTotals {
  readonly commits: number;
  readonly failures: number;
  readonly gaveUp: number;
  /** Scheduled actions not done because the run went far past its time. */
  readonly skipped: number;
  /** Failed commit attempts by exception (CommitFailedException, ValidationException, …). */
  readonly failuresByError: Record<string, number>;
  readonly perTable: Record<
    string,
    { commits: number; failures: number; gaveUp: number; rows: number }
  >;
}

export interface ProbeRow {
  readonly checkpoint: string;
  readonly table: string;
  readonly query: string;
  readonly ms: number | null;
}

export interface DeleteRow {
  readonly checkpoint: string;
  readonly table: string;
  readonly deleteFiles: number;
  readonly live: number;
  readonly dangling: number;
}

export interface CronRow {
  readonly round: string;
  readonly table: string;
  readonly procedure: string;
  readonly ms: number;
  readonly ok: boolean;
  readonly error?: string;
  readonly result?: Record<string, unknown>;
}

export interface VerifyRow {
  readonly table: string;
  /** `main`, `branch_audit` or `tag:<name>`. */
  readonly ref: string;
  readonly ok: boolean;
  readonly expected: { rows: number; hash: string };
  readonly actual: { rows: number; hash: string };
  readonly missing: number;
  readonly extra: number;
  readonly duplicated: number;
  readonly changed: number;
}

export interface RunResult {
  readonly policy: Policy;
  readonly options: Workload;
  readonly catalog: string;
  readonly machine: string;
  readonly startedAt: string;
  readonly endedAt: string;
  readonly tables: readonly TableInfo[];
  readonly samples: readonly Sample[];
  readonly writes: WriterTotals;
  readonly probes: readonly ProbeRow[];
  readonly deletes: readonly DeleteRow[];
  readonly cron: readonly CronRow[];
  readonly tasks: readonly TaskRow[];
  /** Resident sessions' idle tails (ADR 0046): in `coreSeconds`, not in `tasks`. Absent in older results. */
  readonly sessionTails?: TailSummary;
  /** Icepack's tasks' own time (the job's `durationMs`) × cores, cron's way. Absent in older results. */
  readonly taskTime?: TaskTime;
  /** Task events of the simulator's catalog. */
  readonly taskEvents: number;
  readonly duplicates: readonly string[];
  readonly falseLosses: readonly string[];
  /** Task ids whose events break the task lifecycle. */
  readonly lifecycle: readonly string[];
  readonly verify: readonly VerifyRow[];
  /**
   * Core-seconds spent on maintenance: Icepack's runs as sized and its resident sessions' idle
   * tails, or the cron session's.
   */
  readonly coreSeconds: number;
}

export interface Invariants {
  readonly wasted: readonly TaskRow[];
  readonly duplicates: readonly string[];
  /** Refs whose content differs from what the writers wrote (or that were never read). */
  readonly data: readonly VerifyRow[];
  readonly verified: boolean;
}

/** The three invariants: no wasted task, no duplicate Spark run, data identical. */
export function invariants(result: RunResult): Invariants {
  return {
    wasted: result.tasks.filter((t) => t.wasted),
    duplicates: result.duplicates,
    data: result.verify.filter((v) => !v.ok),
    verified: result.verify.length > 0,
  };
}

/** Cores the cron baseline's Spark session holds (local[2]) while a procedure runs. */
export const CRON_SESSION_CORES = 2;

export function cronCoreSeconds(rows: readonly CronRow[]): number {
  return rows.reduce((sum, r) => sum + (CRON_SESSION_CORES * r.ms) / 1000, 0);
}

/** Per-moment totals over all tables (samples are taken table by table in one sweep). */
export function totalsOverTime(samples: readonly Sample[]): {
  t: number;
  dataFiles: number;
  smallFiles: number;
  deleteFiles: number;
  snapshots: number;
  metadataBytes: number;
}[] {
  const sweeps = new Map<number, Sample[]>();
  for (const s of samples) sweeps.set(s.t, [...(sweeps.get(s.t) ?? []), s]);
  return [...sweeps]
    .sort(([a], [b]) => a - b)
    .map(([t, of]) => ({
      t,
      dataFiles: of.reduce((n, s) => n + s.dataFiles, 0),
      smallFiles: of.reduce((n, s) => n + s.smallFiles, 0),
      deleteFiles: of.reduce((n, s) => n + s.deleteFiles, 0),
      snapshots: of.reduce((n, s) => n + s.snapshots, 0),
      metadataBytes: of.reduce((n, s) => n + s.metadataBytes, 0),
    }));
}

/** Each table's last sample. */
export function finalSamples(samples: readonly Sample[]): Map<string, Sample> {
  const last = new Map<string, Sample>();
  for (const s of samples) {
    const seen = last.get(s.table);
    if (seen === undefined || s.t >= seen.t) last.set(s.table, s);
  }
  return last;
}
