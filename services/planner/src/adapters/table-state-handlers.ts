import type { MessageHandlers, MessageContext } from '@icepack/runtime';
import type { Planner } from './planner.ts';

function traceparentOf(context: MessageContext): string | undefined {
  const value = context.headers.traceparent;
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined ? undefined : text.toString();
}

/**
 * The planner's consumer of `icepack.table-state`: `TableScanned` plans and enqueues;
 * a tombstone (dropped table) removes the table's waiting tasks. Each resolves only once
 * the queue and the task events are written, so the runtime commits the offset after.
 */
export function tableStateHandlers(planner: Planner): {
  readonly handlers: MessageHandlers;
  readonly onTombstone: (key: string | null) => Promise<void>;
} {
  return {
    handlers: {
      TableScanned: async (envelope, context) => {
        await planner.handleState(envelope.payload, traceparentOf(context));
      },
    },
    onTombstone: async (key) => {
      if (key !== null) await planner.handleDropped(key);
    },
  };
}
