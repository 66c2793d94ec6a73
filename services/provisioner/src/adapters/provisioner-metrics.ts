import type { Counter, Meter } from '@opentelemetry/api';

/** How reconciling one group (or one whole pass) ended: the `outcome` label. */
export const ReconcileOutcome = {
  ok: 'ok',
  /** A step failed (recorded on the group) or the pass threw; the next pass retries. */
  failed: 'failed',
} as const;
export type ReconcileOutcome = (typeof ReconcileOutcome)[keyof typeof ReconcileOutcome];

/** The provisioner's own metrics (Prometheus names `icepack_provisioner_…`). */
export class ProvisionerMetrics {
  readonly #groups: Counter;
  readonly #passes: Counter;

  constructor(meter: Meter) {
    this.#groups = meter.createCounter('icepack.provisioner.group_reconciles', {
      description: 'Resource groups reconciled by the loop, by group and outcome',
    });
    this.#passes = meter.createCounter('icepack.provisioner.reconcile_passes', {
      description: 'Reconcile passes over every group, by outcome',
    });
  }

  groupReconciled(group: string, outcome: ReconcileOutcome): void {
    this.#groups.add(1, { group, outcome });
  }

  passFinished(outcome: ReconcileOutcome): void {
    this.#passes.add(1, { outcome });
  }
}
