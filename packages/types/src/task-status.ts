/** Where a task is in its life. */
export const TaskStatus = {
  /** The planner decided the work is needed. */
  planned: 'planned',
  /** The planner changed a pending task (priority aged, parameters re-planned). */
  updated: 'updated',
  /** Replaced by another task (a sort replaces a pending merge). */
  superseded: 'superseded',
  /** Dropped before running: no longer needed (table healthy, dropped, paused). */
  skipped: 'skipped',
  /** In the catalog's queue, waiting for a slot or for quota. */
  queued: 'queued',
  /** A Spark job is running it. */
  started: 'started',
  succeeded: 'succeeded',
  failed: 'failed',
  cancelled: 'cancelled',
  /** A retryable failure; it will run again after a backoff. */
  retrying: 'retrying',
} as const;
export type TaskStatus = (typeof TaskStatus)[keyof typeof TaskStatus];

/** A task's first event is always `planned`. */
export const INITIAL_TASK_STATUS: TaskStatus = TaskStatus.planned;

/** The lifecycle as data: status → statuses it may move to. Terminal statuses map to []. */
export const TaskTransitions: { readonly [S in TaskStatus]: readonly TaskStatus[] } = {
  // The planner publishes `planned` once the task is in the queue (no one publishes `queued`
  // for it), so a planned task moves on as a queued one does.
  planned: ['updated', 'queued', 'started', 'failed', 'superseded', 'skipped', 'cancelled'],
  // The planner re-plans a pending task; the dispatcher puts a task back to wait for quota
  // (or after a runner error before the run started), then starts it or gives up on it.
  updated: ['updated', 'queued', 'started', 'failed', 'superseded', 'skipped', 'cancelled'],
  // Queued tasks are re-prioritised (aging) or put back to wait for quota: `updated`.
  queued: ['updated', 'started', 'failed', 'superseded', 'skipped', 'cancelled'],
  started: ['succeeded', 'failed', 'retrying', 'cancelled'],
  // After a failed run the next attempt waits for quota (`updated`) and starts. After a runner
  // error (the run's state unknown) the same run is followed again, so it may end
  // (`succeeded`, `failed`) or meet another runner error (`retrying`) without a new `started`.
  retrying: ['queued', 'updated', 'started', 'retrying', 'succeeded', 'failed', 'cancelled'],
  succeeded: [],
  failed: [],
  cancelled: [],
  superseded: [],
  skipped: [],
};

export function isTerminalStatus(status: TaskStatus): boolean {
  return TaskTransitions[status].length === 0;
}

export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  return TaskTransitions[from].includes(to);
}

/** A status change the lifecycle does not allow: a bug or an out-of-order event. */
export class InvalidTaskTransitionError extends Error {
  override readonly name = 'InvalidTaskTransitionError';
  readonly from: TaskStatus | null;
  readonly to: TaskStatus;
  constructor(from: TaskStatus | null, to: TaskStatus) {
    const allowed = from === null ? [INITIAL_TASK_STATUS] : TaskTransitions[from];
    super(
      `task cannot move from ${from ?? '(new)'} to ${to}; allowed: ${allowed.length > 0 ? allowed.join(', ') : 'none (terminal)'}`,
    );
    this.from = from;
    this.to = to;
  }
}

/** Throws `InvalidTaskTransitionError` unless `from → to` is allowed; `from` null = new task. */
export function assertTransition(from: TaskStatus | null, to: TaskStatus): void {
  const ok = from === null ? to === INITIAL_TASK_STATUS : canTransition(from, to);
  if (!ok) throw new InvalidTaskTransitionError(from, to);
}

/**
 * Checks one task id's statuses, in the order they were published, against the lifecycle and
 * throws `InvalidTaskTransitionError` at the first move it does not allow. A repeat of the
 * current status is a no-op (events are at least once). After a terminal status the id starts
 * a new task (task ids are per table and type). A task starts at `planned` — or, enqueued
 * without the planner's event (tests, a queue filled by hand), as if it were `queued`.
 */
export function assertLifecycle(statuses: Iterable<TaskStatus>): void {
  let current: TaskStatus | undefined;
  for (const status of statuses) {
    if (status === current) continue;
    if (current !== undefined && !isTerminalStatus(current)) assertTransition(current, status);
    else if (status !== TaskStatus.queued)
      assertTransition(status === INITIAL_TASK_STATUS ? null : TaskStatus.queued, status);
    current = status;
  }
}
