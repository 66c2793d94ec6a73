import type { MessageHandler, MessageHandlers } from '@icepack/runtime';
import { tableKey, TaskEventTypes } from '@icepack/types';
import type { LastSucceededStore } from './last-succeeded.ts';

/**
 * The planner's consumer of `icepack.task-events`: a `succeeded` event records when its task
 * type last succeeded on the table (the min interval and re-plans read it); every other
 * status is read and let go. Resolves once the record is in Redis, so the offset is
 * committed after it; a redelivered event changes nothing (the later time is kept).
 */
export function taskOutcomeHandlers(store: Pick<LastSucceededStore, 'record'>): MessageHandlers {
  const ignore: MessageHandler<(typeof TaskEventTypes)[keyof typeof TaskEventTypes]> = () =>
    undefined;
  const handlers: Record<string, unknown> = {};
  for (const type of Object.values(TaskEventTypes)) handlers[type] = ignore;
  const succeeded: MessageHandler<'TaskSucceeded'> = async ({ payload }, context) => {
    const changed = await store.record(payload.table, payload.taskType, payload.at);
    context.logger.debug(
      { table: tableKey(payload.table), type: payload.taskType, at: payload.at, changed },
      'task success recorded',
    );
  };
  handlers[TaskEventTypes.succeeded] = succeeded;
  return handlers;
}
