import type { MessageHandler, MessageHandlers } from '@icepack/runtime';
import { tableKey, TaskEventTypes } from '@icepack/types';
import { ledgerEntryOf } from '../domain/ledger.ts';
import type { LastSucceededStore } from './last-succeeded.ts';
import type { LedgerStore } from './ledger-store.ts';

/**
 * The planner's consumer of `icepack.task-events`: a `succeeded` event records when its task
 * type last succeeded on the table (the min interval and re-plans read it) and, with a
 * `ledger`, the run's cost and benefit (decision 0015); every other status is read and let
 * go. Resolves once both are in Redis, so the offset is committed after them; a redelivered
 * event changes nothing (the later time is kept; the ledger entry is the same member).
 */
export function taskOutcomeHandlers(
  store: Pick<LastSucceededStore, 'record'>,
  ledger?: Pick<LedgerStore, 'record'>,
): MessageHandlers {
  const ignore: MessageHandler<(typeof TaskEventTypes)[keyof typeof TaskEventTypes]> = () =>
    undefined;
  const handlers: Record<string, unknown> = {};
  for (const type of Object.values(TaskEventTypes)) handlers[type] = ignore;
  const succeeded: MessageHandler<'TaskSucceeded'> = async ({ payload }, context) => {
    const changed = await store.record(payload.table, payload.taskType, payload.at);
    const entry = ledgerEntryOf(payload);
    if (ledger !== undefined && entry !== undefined)
      await ledger.record(payload.table.catalog, entry);
    context.logger.debug(
      { table: tableKey(payload.table), type: payload.taskType, at: payload.at, changed },
      'task success recorded',
    );
  };
  handlers[TaskEventTypes.succeeded] = succeeded;
  return handlers;
}
