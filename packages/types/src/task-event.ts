import { z } from 'zod';
import { parseWith } from './validation-error.ts';
import { count, isoDateTime } from './primitives.ts';
import { assertLifecycle, TaskStatus } from './task-status.ts';
import { scorePartSchema, taskTypeSchema } from './task.ts';
import { tableIdSchema } from './table-id.ts';

/** Table health before/after a task: the proof of benefit. */
export const healthFiguresSchema = z.object({
  dataFiles: count,
  smallFiles: count,
  /** Position-delete files + equality-delete files + deletion vectors. */
  deleteFiles: count,
  snapshots: count,
  bytes: count,
});
export type HealthFigures = z.output<typeof healthFiguresSchema>;

export const taskErrorSchema = z.object({
  /** A short classification, e.g. `commit-conflict`, `io`, `oom`, `timeout`, `invalid-table`. */
  kind: z.string().min(1),
  message: z.string(),
  retryable: z.boolean(),
});
export type TaskError = z.output<typeof taskErrorSchema>;

/**
 * What one succeeded run cost (the ledger, decision 0015). Measured where the runner can:
 * `coreSecondsRequested` always; the rest when the job's result reached the dispatcher (the
 * local runner reads it; the Spark operator's runs leave them out).
 */
export const taskCostSchema = z.object({
  /** The run's wall time, from `started` to its end (ms). */
  runMs: count,
  /** Cores the run was sized for (driver + executors) × `runMs`. */
  coreSecondsRequested: z.number().min(0),
  /** CPU seconds the run's processes used (local runner: the Spark JVM and the job's Python, from /proc). */
  coreSecondsUsed: z.number().min(0).optional(),
  /** Bytes of the files the run rewrote (read); 0 for a cleanup (it reads metadata only). */
  bytesRead: count.optional(),
  /** Bytes of the files the run added. */
  bytesWritten: count.optional(),
  /** Data and delete files the run rewrote (read and replaced). */
  filesRewritten: count.optional(),
});
export type TaskCost = z.output<typeof taskCostSchema>;

/**
 * What one succeeded run removed (the ledger). From the job's own figures around its commit
 * when its result is known, else `before` − `after` (which also counts writers' commits in
 * between, so it may be negative).
 */
export const taskBenefitSchema = z.object({
  dataFilesRemoved: z.int(),
  smallFilesRemoved: z.int().optional(),
  /** Position-delete, equality-delete files and deletion vectors removed. */
  deleteFilesRemoved: z.int(),
  snapshotsRemoved: z.int(),
  /** Data bytes of the table's current snapshot before − after (the live size; a cleanup frees storage outside it). */
  bytesSaved: z.int().optional(),
});
export type TaskBenefit = z.output<typeof taskBenefitSchema>;

/** One step of a task's life on `icepack.task-events`. */
export const taskEventSchema = z.object({
  taskId: z.string().min(1),
  table: tableIdSchema,
  taskType: taskTypeSchema,
  status: z.enum(TaskStatus),
  at: isoDateTime,
  /** Why (free text for people): "12 small files > 10", "superseded by sort/…". */
  reason: z.string().optional(),
  /** The factors that fired and their thresholds (the planner's explanation). */
  factors: z.array(scorePartSchema).optional(),
  before: healthFiguresSchema.optional(),
  after: healthFiguresSchema.optional(),
  error: taskErrorSchema.optional(),
  /** 1 for the first run. */
  attempt: z.int().min(1).optional(),
  /**
   * Which launch of the task (dispatcher events): the SparkApplication name or the local run
   * directory. The same across a re-attach after a restart, new for every attempt and every
   * later task run: task ids repeat, run ids do not. Absent on events from elsewhere (the
   * planner's `planned`, `superseded`).
   */
  runId: z.string().min(1).optional(),
  /** `succeeded` (dispatcher): what the run cost. Optional: older events have none. */
  cost: taskCostSchema.optional(),
  /** `succeeded` (dispatcher): what the run removed. Optional: older events have none. */
  benefit: taskBenefitSchema.optional(),
});
export type TaskEvent = z.output<typeof taskEventSchema>;

/** A task event schema that only accepts one status (one message type per status). */
export function taskEventWithStatus<S extends TaskStatus>(status: S) {
  return taskEventSchema.extend({ status: z.literal(status) });
}

/** Validates a task event; throws `ValidationError` naming the field. */
export function parseTaskEvent(value: unknown): TaskEvent {
  return parseWith(taskEventSchema, value, 'task event');
}

/**
 * Checks one task id's events against the lifecycle (`assertLifecycle`) in the order they
 * happened — by `at`: events of different services can arrive out of order (after a Kafka
 * outage the planner's `planned` may land after the dispatcher's `started`). Throws an error
 * naming the refused move and listing the events.
 */
export function assertEventLifecycle(events: readonly TaskEvent[]): void {
  const happened = events.toSorted((a, b) => Date.parse(a.at) - Date.parse(b.at));
  try {
    assertLifecycle(happened.map((e) => e.status));
  } catch (error) {
    const seen = happened.map((e) =>
      e.runId === undefined ? e.status : `${e.status} (${e.runId})`,
    );
    throw new Error(`${(error as Error).message}; events: ${seen.join(' → ')}`, { cause: error });
  }
}
