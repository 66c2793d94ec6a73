import { z } from 'zod';
import { parseWith } from './validation-error.ts';
import { count, isoDateTime } from './primitives.ts';
import { taskCostSchema } from './task-event.ts';
import { taskTypeSchema } from './task.ts';
import { tableIdSchema } from './table-id.ts';

/**
 * A resident session's idle tail (ADR 0046): the time its application was held after its
 * last task until it exited — compute of no task's own, known only at the exit. Published by
 * the dispatcher once the application exited (again after a restart: at least once), under the
 * session's leader (its task and run, its table), for the ledger only: it is not a task's
 * step, no success, no failure.
 */
export const sessionTailSchema = z.object({
  /** The session leader's task id, table and type: whose run the tail is charged to. */
  taskId: z.string().min(1),
  table: tableIdSchema,
  taskType: taskTypeSchema,
  /** The session's application: the leader's run id (the batch's). */
  runId: z.string().min(1),
  /** When the dispatcher saw the application exit. */
  at: isoDateTime,
  /** The idle tail (ms): the job summary's `idleMs`. */
  idleMs: count,
  /** What the tail cost: `runMs` = `idleMs`, `coreSecondsRequested` = the session's cores × it. */
  cost: taskCostSchema,
});
export type SessionTail = z.output<typeof sessionTailSchema>;

/** Validates a session tail; throws `ValidationError` naming the field. */
export function parseSessionTail(value: unknown): SessionTail {
  return parseWith(sessionTailSchema, value, 'session tail');
}
