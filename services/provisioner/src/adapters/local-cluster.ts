import { availableParallelism, totalmem } from 'node:os';
import type { CheckResult } from '@icepack/runtime';
import type { Amount, Reservation } from '../domain/capacity.ts';
import { ProvisionerMode } from '../domain/group-record.ts';
import type { ForeignNamespaceError } from '../domain/ownership.ts';
import type { ClusterPort } from './cluster-port.ts';

export interface LocalClusterOptions {
  /** Capacity to hand out; default this machine's cores and total memory. */
  readonly allocatable?: Amount;
}

/**
 * Local mode: no Kubernetes. A group is a budget of slots, cpu and memory on this machine,
 * checked against its cores and memory; the local runner spends it.
 */
export class LocalCluster implements ClusterPort {
  readonly mode = ProvisionerMode.local;
  readonly where = 'this machine';
  readonly #allocatable: Amount;

  constructor(options: LocalClusterOptions = {}) {
    this.#allocatable = options.allocatable ?? {
      cpuMillis: availableParallelism() * 1000,
      memoryBytes: totalmem(),
    };
  }

  allocatable(): Promise<Amount> {
    return Promise.resolve(this.#allocatable);
  }

  reservations(): Promise<Reservation[]> {
    return Promise.resolve([]);
  }

  /** No namespaces here. */
  foreignNamespace(): Promise<ForeignNamespaceError | undefined> {
    return Promise.resolve(undefined);
  }

  applyStep(): Promise<void> {
    return Promise.resolve();
  }

  cancelJobs(): Promise<number> {
    return Promise.resolve(0);
  }

  deleteNamespace(): Promise<boolean> {
    return Promise.resolve(true);
  }

  health(): Promise<CheckResult> {
    return Promise.resolve({ ok: true });
  }
}
