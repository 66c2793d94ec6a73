import { tableKey, type Task } from '@icepack/types';
import { batchable, DEFAULT_BATCH_LIMITS, type BatchLimits } from './batch.ts';

/**
 * A resident maintenance session (ADR 0045): a batch application on the local runner that,
 * after its task list, stays up while its catalog has small work, and takes further tasks the
 * dispatcher appends to its inbox. Pure decisions: whether a session is wanted, and which
 * waiting tasks a live session takes. When the job closes its inbox is the job's decision
 * (jobs/spark `run_inbox`: the idle bound and the task count given here).
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

/** What a live session holds: its catalog, the tasks it took, its tables not yet ended. */
export interface LiveSession {
  readonly catalog: string;
  /** Tasks the application took so far (its own list's and every append's). */
  readonly taken: number;
  readonly maxTasks: number;
  /** Tables (`tableKey`) with a task in the session whose end is not yet known. */
  readonly busyTables: ReadonlySet<string>;
}

/**
 * The waiting tasks a live session takes now, in the queue's order: small (the batch's bound,
 * `batchable`), of the session's catalog, on a table with no task of the session still going
 * (two tasks of one table would commit against each other), at most one per table, and no
 * more than the session's room (`maxTasks − taken`) nor one batch's `maxTasks` at a time. A
 * task that does not fit is passed over, not a stop. None once the session is full.
 */
export function selectAppend(
  session: LiveSession,
  candidates: readonly Task[],
  limits: BatchLimits = {},
): Task[] {
  const perAppend = limits.maxTasks ?? DEFAULT_BATCH_LIMITS.maxTasks;
  const room = Math.min(session.maxTasks - session.taken, perAppend);
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
