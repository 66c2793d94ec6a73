import { context, SpanKind, trace } from '@opentelemetry/api';
import { Attr, inSpan, injectTraceparent } from '@icepack/runtime';
import { queueNameForCatalog } from '@icepack/types';
import type { Task } from '@icepack/types';
import type { TaskDecision } from '../domain/plan.ts';

/**
 * What one queue write of the planner came to (span attribute `icepack.enqueue.outcome`): the
 * first four match the task event it publishes (`added` ↔ `planned`); `unchanged` means the
 * queue was not as the plan expected (a job appeared, or started running meanwhile) and
 * nothing was written or published.
 */
export const EnqueueOutcome = {
  added: 'added',
  updated: 'updated',
  superseded: 'superseded',
  skipped: 'skipped',
  unchanged: 'unchanged',
} as const;
export type EnqueueOutcome = (typeof EnqueueOutcome)[keyof typeof EnqueueOutcome];

/**
 * Runs one queue write for a decision in an `enqueue <type>` producer span, a child of the
 * active span (the table state's consume span). The task `write` gets carries that span's
 * `traceparent`, so the dispatch that continues the task's trace is the span's child.
 */
export function inEnqueueSpan(
  decision: TaskDecision,
  catalog: string,
  write: (task: Task | undefined) => Promise<EnqueueOutcome>,
): Promise<EnqueueOutcome> {
  const priority = decision.task?.score.priority;
  return inSpan(
    `enqueue ${decision.type}`,
    {
      kind: SpanKind.PRODUCER,
      attributes: {
        [Attr.messagingSystem]: 'bullmq',
        [Attr.icepackQueue]: queueNameForCatalog(catalog),
        [Attr.icepackTaskId]: decision.taskId,
        ...(priority === undefined ? {} : { [Attr.icepackTaskPriority]: priority }),
      },
    },
    async (span) => {
      const { traceparent } = injectTraceparent<{ traceparent?: unknown }>(
        {},
        trace.setSpan(context.active(), span),
      );
      const task =
        decision.task !== undefined && typeof traceparent === 'string'
          ? { ...decision.task, traceparent }
          : decision.task;
      const outcome = await write(task);
      span.setAttribute(Attr.icepackEnqueueOutcome, outcome);
      return outcome;
    },
  );
}
