import type { MessageHandler, MessageHandlers } from '@icepack/runtime';
import { tableKey, TaskEventTypes } from '@icepack/types';
import type { ConsoleStore } from '../adapters/console-store.ts';

/**
 * The task-outcome handlers with `failed` events also kept as the catalog's recent failures
 * (the console's queue page). A redelivered event may be listed twice; the list is capped.
 */
export function withRecentFailures(
  handlers: MessageHandlers,
  store: Pick<ConsoleStore, 'recordFailure'>,
): MessageHandlers {
  const previous = (handlers as Record<string, unknown>)[TaskEventTypes.failed] as
    MessageHandler<'TaskFailed'> | undefined;
  const failed: MessageHandler<'TaskFailed'> = async (envelope, context) => {
    await previous?.(envelope, context);
    const e = envelope.payload;
    await store.recordFailure(e.table.catalog, {
      taskId: e.taskId,
      tableKey: tableKey(e.table),
      type: e.taskType,
      at: e.at,
      reason:
        e.error === undefined
          ? (e.reason ?? 'no reason given')
          : `${e.error.kind}: ${e.error.message}`,
    });
  };
  return { ...handlers, [TaskEventTypes.failed]: failed };
}
