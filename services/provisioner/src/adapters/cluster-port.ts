import type { CheckResult } from '@icepack/runtime';
import type { Catalog, ResourceGroup } from '@icepack/types';
import type { Amount, Reservation } from '../domain/capacity.ts';
import type { GroupStep, ProvisionerMode } from '../domain/group-record.ts';
import type { ForeignNamespaceError } from '../domain/ownership.ts';

/** Where groups become real: a Kubernetes cluster, or this machine in local mode. */
export interface ClusterPort {
  readonly mode: ProvisionerMode;
  /** Names the capacity in messages: "the cluster", "this machine". */
  readonly where: string;
  /** Total allocatable cpu and memory. */
  allocatable(): Promise<Amount>;
  /** Icepack quotas found in the cluster, by group (none in local mode). */
  reservations(): Promise<Reservation[]>;
  /** The refusal when the group's namespace exists and is not this installation's; else undefined. */
  foreignNamespace(group: ResourceGroup): Promise<ForeignNamespaceError | undefined>;
  /**
   * Creates or corrects what `step` stands for; idempotent. The namespace step throws
   * ForeignNamespaceError for a namespace this installation does not own.
   */
  applyStep(step: GroupStep, group: ResourceGroup, catalog: Catalog): Promise<void>;
  /** Stops the group's running Spark jobs (a drain that timed out). Returns how many. */
  cancelJobs(group: ResourceGroup): Promise<number>;
  /**
   * Deletes the group's namespace; true once it is gone. Throws ForeignNamespaceError, and
   * deletes nothing, when the namespace is not this installation's.
   */
  deleteNamespace(group: ResourceGroup): Promise<boolean>;
  health(): Promise<CheckResult>;
}
