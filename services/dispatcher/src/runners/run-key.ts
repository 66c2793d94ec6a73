import { createHash } from 'node:crypto';

/** A short stable hash of a task id: task ids hold `/`, `%` and any table name. */
export function taskHash(taskId: string, length = 16): string {
  return createHash('sha256').update(taskId).digest('hex').slice(0, length);
}

/** Directory name of one run of a task: the same for a retry of the same attempt. */
export function runKey(taskId: string, attempt: number): string {
  return `${taskHash(taskId)}-a${String(attempt)}`;
}
