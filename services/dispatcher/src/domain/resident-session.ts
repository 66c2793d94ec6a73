import { tableKey, type Task } from '@icepack/types';
import { batchable, DEFAULT_BATCH_LIMITS, type BatchLimits } from './batch.ts';

/**
 * A resident maintenance session (ADR 0045): a batch application on the local runner that,
 * after its task list, stays up while its catalog has small work, and takes further tasks the
 * dispatcher appends to its inbox. Pure decisions: whether a session is wanted, until when it
 * may take work (its task timeout, ADR 0046) and which waiting tasks a live session takes. The
 * job closes its inbox (jobs/spark `run_inbox`) on the idle bound, the task count and the
 * close time given here, whichever comes first.
 */
export interface ResidentSettings {
  /** The job closes its inbox after finding nothing in it for this long; 0 is off. */
  readonly idleSeconds: number;
  /** The most tasks one application takes, its own list's included. */
  readonly maxTasks: number;
}

/** Off: every batch application exits after its list (ADR 0027), as before ADR 0045. */
export const RESIDENT_OFF: ResidentSettings = { idleSeconds: 0, maxTasks: 100 };

/** Is a resident session wanted at all with these settings? */
export function residentOn(settings: ResidentSettings | undefined): settings is ResidentSettings {
  return settings !== undefined && settings.idleSeconds > 0 && settings.maxTasks >= 1;
}

/**
 * The share of the task timeout a session keeps for itself at its end (stopping its Spark
 * session, writing its summary, exiting) and the least time judged for one task: 5 % of the
 * timeout, at least {@link SESSION_MIN_RESERVE_MS}.
 */
export const SESSION_RESERVE_FRACTION = 0.05;
/** The least reserve: a session's stop and exit on a loaded machine. */
export const SESSION_MIN_RESERVE_MS = 30_000;

/** The reserve of a session whose application the runner kills after `timeoutMs`. */
export function sessionReserveMs(timeoutMs: number): number {
  return Math.max(SESSION_MIN_RESERVE_MS, Math.round(timeoutMs * SESSION_RESERVE_FRACTION));
}

/**
 * When a session launched at `launchedAtMs` closes its inbox at the latest (epoch ms): the
 * runner kills the application at its launch + `ICEPACK_TASK_TIMEOUT`, and the tasks it then
 * holds without a result end timed out (ADR 0046). The reserve before the kill is its exit's.
 * At or before the launch when the timeout is shorter than the reserve: nothing is appended.
 */
export function sessionCloseBy(launchedAtMs: number, timeoutMs: number): number {
  return launchedAtMs + timeoutMs - sessionReserveMs(timeoutMs);
}

/** What the dispatcher knows of a live session's time (see {@link timeRoom}). */
export interface SessionTime {
  /** `sessionCloseBy`: every task it takes must end by then. */
  readonly closeBy: number;
  /** `sessionReserveMs`: also the least time judged for one task. */
  readonly reserveMs: number;
  /** The longest run (`durationMs`) of a task of the session so far; 0 before the first. */
  readonly longestTaskMs: number;
  /** When its last task ended, or the launch before any did (epoch ms). */
  readonly lastEndAt: number;
  /** Tasks it took whose end is not known yet (running or waiting in its inbox). */
  readonly pending: number;
}

/**
 * How long one more task of the session is judged to take (ms): the longest of its tasks so far
 * — the first one's includes the session's start, so warm tasks are over-judged — or longer
 * when the task running now (a task is pending) has already run longer (since the last end, or
 * the launch); never less than the reserve.
 */
export function taskEstimateMs(time: SessionTime, nowMs: number): number {
  const running = time.pending > 0 ? nowMs - time.lastEndAt : 0;
  return Math.max(time.reserveMs, time.longestTaskMs, running);
}

/**
 * How many more tasks the session may take now so that, one after another, those it holds and
 * these end by its close time, each judged at `taskEstimateMs`. 0 once it cannot: its task
 * timeout would otherwise kill it with work taken (ADR 0046); the tasks are launched normally.
 */
export function timeRoom(time: SessionTime, nowMs: number): number {
  const left = time.closeBy - nowMs;
  if (left <= 0) return 0;
  return Math.max(0, Math.floor(left / taskEstimateMs(time, nowMs)) - time.pending);
}

/** What a live session holds: its catalog, the tasks it took, its tables not yet ended. */
export interface LiveSession {
  readonly catalog: string;
  /** Tasks the application took so far (its own list's and every append's). */
  readonly taken: number;
  readonly maxTasks: number;
  /** Tables (`tableKey`) with a task in the session whose end is not yet known. */
  readonly busyTables: ReadonlySet<string>;
  /** `timeRoom`: how many more tasks its time allows; unbounded when not given. */
  readonly timeRoom?: number;
}

/**
 * How many tasks a live session may take in its next append: its room in tasks
 * (`maxTasks − taken`), in time (`timeRoom`) and one batch's `maxTasks`. 0: take none, and
 * look at no waiting task either.
 */
export function appendRoom(session: LiveSession, limits: BatchLimits = {}): number {
  const perAppend = limits.maxTasks ?? DEFAULT_BATCH_LIMITS.maxTasks;
  return Math.max(
    0,
    Math.min(session.maxTasks - session.taken, session.timeRoom ?? Infinity, perAppend),
  );
}

/**
 * The waiting tasks a live session takes now, in the queue's order: small (the batch's bound,
 * `batchable`), of the session's catalog, on a table with no task of the session still going
 * (two tasks of one table would commit against each other), at most one per table, and no
 * more than `appendRoom` (the session's room in tasks and in time, one batch's `maxTasks`). A
 * task that does not fit is passed over, not a stop. None once the session is full.
 */
export function selectAppend(
  session: LiveSession,
  candidates: readonly Task[],
  limits: BatchLimits = {},
): Task[] {
  const room = appendRoom(session, limits);
  const chosen: Task[] = [];
  const tables = new Set(session.busyTables);
  for (const task of candidates) {
    if (chosen.length >= room) break;
    if (task.table.catalog !== session.catalog || !batchable(task, limits)) continue;
    const table = tableKey(task.table);
    if (tables.has(table)) continue;
    chosen.push(task);
    tables.add(table);
  }
  return chosen;
}

/**
 * When a session's leader — the task it was launched for, whose job holds the worker slot and
 * the quota claim for the whole application — is reported (ADR 0046): as its result appears,
 * as every other task of the session is, when it succeeded; when the application exits, when it
 * failed. A failure's next step may be a retry, which puts the job back to wait: that must not
 * happen while the application it holds the slot and the claim for still lives.
 */
export function leaderReportedAtResult(succeeded: boolean): boolean {
  return succeeded;
}
