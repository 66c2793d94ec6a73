import { counter, createInstruments, histogram, type Instruments } from '@icepack/runtime';
import type { Meter } from '@opentelemetry/api';
import type { HandleOutcome } from './planner.ts';

/** What handling one message of `icepack.table-state` came to: the `outcome` label. */
export const StateOutcome = {
  /** At least one task was created, updated, superseded or skipped. */
  planned: 'planned',
  /** A newer state that changed nothing in the queue. */
  unchanged: 'unchanged',
  /** Older than the state already handled (ignored). */
  stale: 'stale',
  /** The state already handled (a redelivery; ignored). */
  duplicate: 'duplicate',
  /** A tombstone: the table was dropped. */
  dropped: 'dropped',
  /** The handler threw; the message is redelivered (or dead-lettered). */
  failed: 'failed',
} as const;
export type StateOutcome = (typeof StateOutcome)[keyof typeof StateOutcome];

// The task event status of an action → the `action` label (`planned` reads as `created` here).
const ACTION_LABEL: Readonly<Record<string, string>> = { planned: 'created' };

const INSTRUMENTS = {
  states: counter({
    name: 'icepack.planner.table_states',
    description: 'Table states handled, by catalog and outcome',
    attributes: ['catalog', 'outcome'],
  }),
  tasks: counter({
    name: 'icepack.planner.tasks',
    description: 'Changes to waiting tasks, by catalog, task type and action',
    attributes: ['catalog', 'task_type', 'action'],
  }),
  seconds: histogram({
    name: 'icepack.planner.plan.duration.seconds',
    description: 'Time to handle one table state: order, plan, enqueue, publish, store',
    unit: 's',
    attributes: ['catalog'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  }),
};

/**
 * The planner's own metrics (Prometheus names `icepack_planner_…`). Labels are the catalog,
 * the task type and a fixed set of outcomes: never a table name.
 */
export class PlannerMetrics {
  readonly #i: Instruments<typeof INSTRUMENTS>;

  constructor(meter: Meter) {
    this.#i = createInstruments(meter, INSTRUMENTS);
  }

  /** A table state (or tombstone, `dropped`) handled in `seconds`, with what it did. */
  handled(catalog: string, outcome: HandleOutcome, seconds: number, dropped = false): void {
    for (const { type, action } of outcome.actions) {
      this.#i.tasks.add(1, { catalog, task_type: type, action: ACTION_LABEL[action] ?? action });
    }
    this.#i.states.add(1, { catalog, outcome: stateOutcome(outcome, dropped) });
    this.#i.seconds.record(seconds, { catalog });
  }

  /** Handling threw; the consumer redelivers the message. */
  failed(catalog: string): void {
    this.#i.states.add(1, { catalog, outcome: StateOutcome.failed });
  }
}

function stateOutcome(outcome: HandleOutcome, dropped: boolean): StateOutcome {
  if (dropped) return StateOutcome.dropped;
  if (outcome.ignored === 'older') return StateOutcome.stale;
  if (outcome.ignored === 'duplicate') return StateOutcome.duplicate;
  return outcome.actions.length > 0 ? StateOutcome.planned : StateOutcome.unchanged;
}
