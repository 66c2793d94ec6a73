import { createHash } from 'node:crypto';

/** A short stable hash of a task id: task ids hold `/`, `%` and any table name. */
export function taskHash(taskId: string, length = 16): string {
  return createHash('sha256').update(taskId).digest('hex').slice(0, length);
}

/** Directory name of one run (task run, attempt): the same when it is re-attached. */
export function runKey(taskRun: string, attempt: number): string {
  return `${taskHash(taskRun)}-a${String(attempt)}`;
}
