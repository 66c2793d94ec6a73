/**
 * What Icepack did during a simulator run, from its task events and the local runner's
 * launch records: one row per Spark run, and the two invariants the run checks — no wasted
 * task, no duplicate Spark run — and its compute: the runs' and the resident sessions' idle
 * tails. Pure: no I/O.
 */
import type { HealthFigures, SessionTail, TaskEvent } from '@icepack/types';

/** One launch of the local runner (its run directory's `runs.log`, `result.json`). */
export interface Launch {
  readonly taskId: string;
  readonly runId: string;
  /** The planned task instance the run belongs to (task ids repeat across instances). */
  readonly taskRun?: string;
  readonly attempt: number;
  readonly pid?: number;
  readonly startedAt: number;
  /** When its result was written; absent while it runs or when it ended without one. */
  readonly endedAt?: number;
  /** The result's `ok`; absent without a result. */
  readonly ok?: boolean;
}

export type Outcome = 'succeeded' | 'failed' | 'cancelled' | 'retrying' | 'running';

export interface TaskRow {
  readonly taskId: string;
  readonly table: string;
  readonly type: TaskEvent['taskType'];
  readonly runId: string;
  readonly attempt: number;
  readonly startedAt: number;
  readonly endedAt?: number;
  /** From the task's last `planned`/`updated`/`retrying` event before it started. */
  readonly queueWaitMs?: number;
  readonly runMs?: number;
  /**
   * Cores the run was sized for × its run time: the `succeeded` event's ledger cost, else
   * the group's cores × the time between the run's events.
   */
  readonly coreSecondsRequested?: number;
  /** The ledger's cost of a succeeded run (task event `cost`): CPU used, bytes, files. */
  readonly coreSecondsUsed?: number;
  readonly bytesRead?: number;
  readonly bytesWritten?: number;
  readonly filesRewritten?: number;
  readonly outcome: Outcome;
  readonly error?: string;
  readonly before?: HealthFigures;
  readonly after?: HealthFigures;
  /** Succeeded and changed none of data files, small files, delete files, snapshots. */
  readonly wasted: boolean;
}

const ENDS: readonly TaskEvent['status'][] = ['succeeded', 'failed', 'cancelled', 'retrying'];
const WAITS: readonly TaskEvent['status'][] = ['planned', 'updated', 'retrying', 'queued'];

const ms = (at: string): number => Date.parse(at);

/** Same data files, small files, delete files and snapshots before and after. */
export function changedNothing(before: HealthFigures, after: HealthFigures): boolean {
  return (
    before.dataFiles === after.dataFiles &&
    before.smallFiles === after.smallFiles &&
    before.deleteFiles === after.deleteFiles &&
    before.snapshots === after.snapshots
  );
}

/**
 * One row per `started` event (one task's run), in start order. A task's run is (task id, run
 * id): the tasks of a batch share the batch's run id (ADR 0027), each with its own events.
 */
export function taskRows(events: readonly TaskEvent[], coresPerRun: number): TaskRow[] {
  const ordered = events.toSorted((a, b) => ms(a.at) - ms(b.at));
  const rows: TaskRow[] = [];
  const seen = new Set<string>();
  for (const [i, start] of ordered.entries()) {
    const run = `${start.taskId}\u0000${String(start.runId)}`;
    if (start.status !== 'started' || start.runId === undefined || seen.has(run)) continue;
    seen.add(run);
    const end = ordered
      .slice(i + 1)
      .find((e) => e.runId === start.runId && e.taskId === start.taskId && ENDS.includes(e.status));
    const waitedFrom = ordered
      .slice(0, i)
      .findLast((e) => e.taskId === start.taskId && WAITS.includes(e.status));
    const startedAt = ms(start.at);
    const endedAt = end === undefined ? undefined : ms(end.at);
    const runMs = endedAt === undefined ? undefined : endedAt - startedAt;
    const before = end?.before ?? start.before;
    const after = end?.after;
    const outcome: Outcome = end === undefined ? 'running' : (end.status as Outcome);
    const cost = end?.cost;
    const requested =
      cost?.coreSecondsRequested ??
      (runMs === undefined ? undefined : (coresPerRun * runMs) / 1000);
    rows.push({
      taskId: start.taskId,
      table: [...start.table.namespace, start.table.name].join('.'),
      type: start.taskType,
      runId: start.runId,
      attempt: start.attempt ?? 1,
      startedAt,
      ...(endedAt === undefined ? {} : { endedAt }),
      ...(waitedFrom === undefined ? {} : { queueWaitMs: startedAt - ms(waitedFrom.at) }),
      ...(runMs === undefined ? {} : { runMs }),
      ...(requested === undefined ? {} : { coreSecondsRequested: requested }),
      ...(cost?.coreSecondsUsed === undefined ? {} : { coreSecondsUsed: cost.coreSecondsUsed }),
      ...(cost?.bytesRead === undefined ? {} : { bytesRead: cost.bytesRead }),
      ...(cost?.bytesWritten === undefined ? {} : { bytesWritten: cost.bytesWritten }),
      ...(cost?.filesRewritten === undefined ? {} : { filesRewritten: cost.filesRewritten }),
      outcome,
      ...(end?.error === undefined ? {} : { error: `${end.error.kind}: ${end.error.message}` }),
      ...(before === undefined ? {} : { before }),
      ...(after === undefined ? {} : { after }),
      wasted:
        outcome === 'succeeded' &&
        before !== undefined &&
        after !== undefined &&
        changedNothing(before, after),
    });
  }
  return rows;
}

/**
 * Every way a task's Spark job ran more than once, each as a sentence, from the local
 * runner's launch records (every launch, with its start and end) — not from task events: a
 * task id repeats when a task is planned again after its last attempt failed (a new instance,
 * not a duplicate; lake-sim 2026-12-02), and events are published at least once, best effort:
 * - one run id launched twice (the runner's launch log);
 * - a task's run launched while an earlier run of the same task still ran;
 * - one planned task instance with two runs that both succeeded.
 */
export function duplicateRuns(launches: readonly Launch[]): string[] {
  const found: string[] = [];
  for (const [runId, of] of Map.groupBy(launches, (l) => l.runId)) {
    if (of.length > 1) found.push(`run ${runId} launched ${String(of.length)} times`);
  }
  for (const [taskId, of] of Map.groupBy(launches, (l) => l.taskId)) {
    const sorted = of.toSorted((a, b) => a.startedAt - b.startedAt);
    for (const [i, later] of sorted.entries()) {
      const overlapped = sorted
        .slice(0, i)
        .find((earlier) => earlier.endedAt !== undefined && later.startedAt < earlier.endedAt);
      if (overlapped !== undefined) {
        found.push(
          `${taskId}: run ${later.runId} launched while run ${overlapped.runId} still ran (it ended ${String(Math.round((overlapped.endedAt! - later.startedAt) / 1000))} s later)`,
        );
      }
    }
  }
  for (const [taskRun, of] of Map.groupBy(
    launches.filter((l) => l.taskRun !== undefined && l.ok === true),
    (l) => l.taskRun!,
  )) {
    if (of.length > 1) {
      found.push(
        `task run ${taskRun} succeeded in ${String(of.length)} Spark runs: ${of.map((l) => l.runId).join(', ')}`,
      );
    }
  }
  return found;
}

/** Runs reported `lost` (ended without a result) whose Spark job did write a result. */
export function falseLosses(events: readonly TaskEvent[], launches: readonly Launch[]): string[] {
  const byRun = new Map(launches.map((l) => [l.runId, l]));
  return events
    .filter((e) => e.error?.kind === 'lost' && e.runId !== undefined)
    .filter((e) => byRun.get(e.runId!)?.ok !== undefined)
    .map(
      (e) =>
        `${e.taskId}: run ${e.runId!} reported lost at ${e.at}, but its job wrote a result (ok: ${String(byRun.get(e.runId!)!.ok)})`,
    );
}

export interface TaskSummary {
  readonly runs: number;
  readonly byType: Record<string, number>;
  readonly byOutcome: Record<string, number>;
  readonly wasted: number;
  readonly coreSecondsRequested: number;
  /** Over the runs whose ledger cost carries it (local runner). */
  readonly coreSecondsUsed: number;
  readonly bytesRead: number;
  readonly bytesWritten: number;
  readonly queueWaitP50Ms?: number;
  readonly runP50Ms?: number;
}

/**
 * Where Icepack's requested core-seconds went, by Spark application: a run id is one
 * application (the tasks of a batch share it, ADR 0027). The job charges the session start to
 * the application's first task, so each application's costliest task stands for "start plus
 * one task's work", the others for the work of a warm session alone. The costliest, not the
 * first started: a batch's `started` events are all published before its launch.
 */
export interface ApplicationCosts {
  readonly applications: number;
  /** Applications that ran more than one task. */
  readonly batches: number;
  /** Requested core-seconds of each application's costliest task, summed. */
  readonly startersRequested: number;
  /** Requested core-seconds of every other task, and how many they are. */
  readonly othersRequested: number;
  readonly others: number;
}

export function applicationCosts(rows: readonly TaskRow[]): ApplicationCosts {
  const byRun = Map.groupBy(rows, (r) => r.runId);
  let startersRequested = 0;
  let othersRequested = 0;
  for (const tasks of byRun.values()) {
    const costs = tasks.map((t) => t.coreSecondsRequested ?? 0);
    const top = Math.max(...costs);
    startersRequested += top;
    othersRequested += costs.reduce((a, b) => a + b, 0) - top;
  }
  return {
    applications: byRun.size,
    batches: [...byRun.values()].filter((t) => t.length > 1).length,
    startersRequested,
    othersRequested,
    others: rows.length - byRun.size,
  };
}

function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = values.toSorted((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

const countBy = (values: readonly string[]): Record<string, number> =>
  Object.fromEntries([...Map.groupBy(values, (v) => v)].map(([k, v]) => [k, v.length]));

export function summarizeTasks(rows: readonly TaskRow[]): TaskSummary {
  const wait = median(rows.flatMap((r) => (r.queueWaitMs === undefined ? [] : [r.queueWaitMs])));
  const run = median(rows.flatMap((r) => (r.runMs === undefined ? [] : [r.runMs])));
  return {
    runs: rows.length,
    byType: countBy(rows.map((r) => r.type)),
    byOutcome: countBy(rows.map((r) => r.outcome)),
    wasted: rows.filter((r) => r.wasted).length,
    coreSecondsRequested: rows.reduce((sum, r) => sum + (r.coreSecondsRequested ?? 0), 0),
    coreSecondsUsed: rows.reduce((sum, r) => sum + (r.coreSecondsUsed ?? 0), 0),
    bytesRead: rows.reduce((sum, r) => sum + (r.bytesRead ?? 0), 0),
    bytesWritten: rows.reduce((sum, r) => sum + (r.bytesWritten ?? 0), 0),
    ...(wait === undefined ? {} : { queueWaitP50Ms: wait }),
    ...(run === undefined ? {} : { runP50Ms: run }),
  };
}

/**
 * Resident sessions' idle tails (ADR 0046): the cores a session held after its last task
 * until it exited, compute of no task's own — not a Spark run, not a task, never wasted.
 */
export interface TailSummary {
  /** Sessions that idled after their last task (one per leader's task and run). */
  readonly sessions: number;
  readonly coreSecondsRequested: number;
}

/**
 * One Spark application's tasks as the job timed them (`durationMs`, from its run directory:
 * a batch's or session's summary, else the single run's result). A single run's time counts
 * from its session's start; a batch's or session's tasks, from their own.
 */
export interface ApplicationTaskTimes {
  readonly runId: string;
  readonly durationsMs: readonly number[];
}

/**
 * Icepack's work in cron's terms (issue 15): the tasks' own time × the cores they ran on, as
 * cron's compute is its calls' time in the writers' warm session × its cores — not the time
 * an application is held. `warm`: without each application's longest task, where its session
 * start (and a cold JVM's first work) is: what the tasks would cost in a session someone
 * already runs.
 */
export interface TaskTime {
  readonly applications: number;
  readonly tasks: number;
  readonly coreSeconds: number;
  readonly warmTasks: number;
  readonly warmCoreSeconds: number;
}

export function taskTime(apps: readonly ApplicationTaskTimes[], coresPerRun: number): TaskTime {
  let tasks = 0;
  let ms = 0;
  let warmMs = 0;
  for (const { durationsMs } of apps) {
    if (durationsMs.length === 0) continue;
    const total = durationsMs.reduce((a, b) => a + b, 0);
    tasks += durationsMs.length;
    ms += total;
    warmMs += total - Math.max(...durationsMs);
  }
  const counted = apps.filter((a) => a.durationsMs.length > 0).length;
  return {
    applications: counted,
    tasks,
    coreSeconds: (coresPerRun * ms) / 1000,
    warmTasks: tasks - counted,
    warmCoreSeconds: (coresPerRun * warmMs) / 1000,
  };
}

/** The tails, each session once (the dispatcher publishes at least once: after a restart again). */
export function sessionTails(tails: readonly SessionTail[]): TailSummary {
  const once = new Map(tails.map((t) => [`${t.taskId}\u0000${t.runId}`, t]));
  let coreSecondsRequested = 0;
  for (const t of once.values()) coreSecondsRequested += t.cost.coreSecondsRequested;
  return { sessions: once.size, coreSecondsRequested };
}

/** Icepack's maintenance compute: its runs' requested core-seconds and its sessions' idle tails. */
export function icepackCoreSeconds(
  rows: readonly TaskRow[],
  tails: readonly SessionTail[],
): number {
  const runs = rows.reduce((n, r) => n + (r.coreSecondsRequested ?? 0), 0);
  return runs + sessionTails(tails).coreSecondsRequested;
}
