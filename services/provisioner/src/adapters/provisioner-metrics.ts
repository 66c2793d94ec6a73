import { counter, createInstruments, type Instruments } from '@icepack/runtime';
import type { Meter } from '@opentelemetry/api';

/** How reconciling one group (or one whole pass) ended: the `outcome` label. */
export const ReconcileOutcome = {
  ok: 'ok',
  /** A step failed (recorded on the group) or the pass threw; the next pass retries. */
  failed: 'failed',
} as const;
export type ReconcileOutcome = (typeof ReconcileOutcome)[keyof typeof ReconcileOutcome];

const INSTRUMENTS = {
  groups: counter({
    name: 'icepack.provisioner.group_reconciles',
    description: 'Resource groups reconciled by the loop, by group and outcome',
    attributes: ['group', 'outcome'],
  }),
  passes: counter({
    name: 'icepack.provisioner.reconcile_passes',
    description: 'Reconcile passes over every group, by outcome',
    attributes: ['outcome'],
  }),
};

/** The provisioner's own metrics (Prometheus names `icepack_provisioner_…`). */
export class ProvisionerMetrics {
  readonly #i: Instruments<typeof INSTRUMENTS>;

  constructor(meter: Meter) {
    this.#i = createInstruments(meter, INSTRUMENTS);
  }

  groupReconciled(group: string, outcome: ReconcileOutcome): void {
    this.#i.groups.add(1, { group, outcome });
  }

  passFinished(outcome: ReconcileOutcome): void {
    this.#i.passes.add(1, { outcome });
  }
}
