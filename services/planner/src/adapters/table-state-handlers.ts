import type { MessageHandlers } from '@icepack/runtime';
import { parseTableKey } from '@icepack/types';
import type { HandleOutcome, Planner } from './planner.ts';
import type { PlannerMetrics } from './planner-metrics.ts';

/** A tombstone's catalog for the metrics; a malformed key fails in the planner itself. */
function catalogOfKey(key: string): string {
  try {
    return parseTableKey(key).catalog;
  } catch {
    return 'unknown';
  }
}

/** Runs one handling and tells the metrics what it came to and how long it took. */
async function measured(
  metrics: PlannerMetrics | undefined,
  catalog: string,
  handle: () => Promise<HandleOutcome>,
  dropped = false,
): Promise<void> {
  const started = performance.now();
  let outcome: HandleOutcome;
  try {
    outcome = await handle();
  } catch (error) {
    metrics?.failed(catalog);
    throw error;
  }
  metrics?.handled(catalog, outcome, (performance.now() - started) / 1000, dropped);
}

/**
 * The planner's consumer of `icepack.table-state`: `TableScanned` plans and enqueues;
 * a tombstone (dropped table) removes the table's waiting tasks. Each resolves only once
 * the queue and the task events are written, so the runtime commits the offset after.
 */
export function tableStateHandlers(
  planner: Pick<Planner, 'handleState' | 'handleDropped'>,
  metrics?: PlannerMetrics,
): {
  readonly handlers: MessageHandlers;
  readonly onTombstone: (key: string | null) => Promise<void>;
} {
  return {
    handlers: {
      // The runtime calls handlers inside the message's consume span: the enqueue spans and
      // the tasks' traces hang off it.
      TableScanned: (envelope) =>
        measured(metrics, envelope.payload.table.catalog, () =>
          planner.handleState(envelope.payload),
        ),
    },
    onTombstone: async (key) => {
      if (key === null) return;
      await measured(metrics, catalogOfKey(key), () => planner.handleDropped(key), true);
    },
  };
}
