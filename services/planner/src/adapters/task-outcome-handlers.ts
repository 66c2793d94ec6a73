import type { MessageHandler, MessageHandlers } from '@icepack/runtime';
import { tableKey, TaskEventTypes } from '@icepack/types';
import { ledgerEntryOf, ledgerEntryOfTail } from '../domain/ledger.ts';
import type { LastSucceededStore } from './last-succeeded.ts';
import type { LedgerStore } from './ledger-store.ts';

/**
 * The planner's consumer of `icepack.task-events`: a `succeeded` event records when its task
 * type last succeeded on the table (the min interval and re-plans read it) and, with a
 * `ledger`, the run's cost and benefit (decision 0015); a `failed` event (the task gave up:
 * BullMQ drops failed jobs, so the event is the only trace) lengthens the type's failure
 * streak on the table, which the back-off reads (ADR 0028); every other status is read and
 * let go. Resolves once all is in Redis, so the offset is committed after them; a redelivered
 * event changes nothing (the later time is kept; the ledger keeps one entry per run, the
 * first reported — a run reported again after a dispatcher restart too; a failure is counted
 * once by its time). A `ResidentSessionEnded` (ADR 0046) adds the session's idle tail to the
 * ledger, once per session — not a success: no last-succeeded time, no rescan.
 */
export function taskOutcomeHandlers(
  store: Pick<LastSucceededStore, 'record' | 'recordFailure'>,
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
  const failed: MessageHandler<'TaskFailed'> = async ({ payload }, context) => {
    const streak = await store.recordFailure(
      payload.table,
      payload.taskType,
      payload.at,
      payload.error?.kind,
    );
    context.logger.debug(
      { table: tableKey(payload.table), type: payload.taskType, at: payload.at, streak },
      'task failure recorded',
    );
  };
  handlers[TaskEventTypes.failed] = failed;
  const tail: MessageHandler<'ResidentSessionEnded'> = async ({ payload }, context) => {
    const added = await ledger?.record(payload.table.catalog, ledgerEntryOfTail(payload));
    context.logger.debug(
      { table: tableKey(payload.table), runId: payload.runId, idleMs: payload.idleMs, added },
      'resident session tail recorded',
    );
  };
  handlers.ResidentSessionEnded = tail;
  return handlers;
}
