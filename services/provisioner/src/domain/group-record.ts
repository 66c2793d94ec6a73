import type { BindingState, ResourceGroup } from '@icepack/types';
import { namespaceForGroup } from '@icepack/types';

/** How the provisioner realises a group: Kubernetes objects, or a budget on this machine. */
export const ProvisionerMode = { kubernetes: 'kubernetes', local: 'local' } as const;
export type ProvisionerMode = (typeof ProvisionerMode)[keyof typeof ProvisionerMode];

/** The steps of creating a group, in order (architecture.md). */
export const GroupStep = {
  persisted: 'persisted',
  namespace: 'namespace',
  resourceQuota: 'resourceQuota',
  limitRange: 'limitRange',
  configMap: 'configMap',
  serviceAccount: 'serviceAccount',
  role: 'role',
  roleBinding: 'roleBinding',
  ready: 'ready',
  bindingPublished: 'bindingPublished',
} as const;
export type GroupStep = (typeof GroupStep)[keyof typeof GroupStep];
export const GROUP_STEPS: readonly GroupStep[] = Object.values(GroupStep);

/** The steps that create Kubernetes objects (skipped in local mode). */
export const KUBERNETES_STEPS: readonly GroupStep[] = [
  GroupStep.namespace,
  GroupStep.resourceQuota,
  GroupStep.limitRange,
  GroupStep.configMap,
  GroupStep.serviceAccount,
  GroupStep.role,
  GroupStep.roleBinding,
];

export const StepState = {
  pending: 'pending',
  done: 'done',
  failed: 'failed',
  skipped: 'skipped',
} as const;
export type StepState = (typeof StepState)[keyof typeof StepState];

export const GroupPhase = {
  /** Steps still to run (or failing; the reconcile loop retries). */
  provisioning: 'provisioning',
  ready: 'ready',
  /** Being deleted: no new tasks, waiting for running ones. */
  draining: 'draining',
  /** Drained: the namespace goes, then the binding is tombstoned and the record removed. */
  deleting: 'deleting',
} as const;
export type GroupPhase = (typeof GroupPhase)[keyof typeof GroupPhase];

export interface StepStatus {
  readonly state: StepState;
  /** When it last changed (ISO-8601). */
  readonly at: string;
  /** Why it failed or was skipped. */
  readonly message?: string;
}

/** What Redis holds per group: the definition and where its provisioning stands. */
export interface GroupRecord {
  readonly group: ResourceGroup;
  readonly mode: ProvisionerMode;
  readonly phase: GroupPhase;
  readonly steps: Readonly<Record<GroupStep, StepStatus>>;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** When draining started, for the drain timeout across restarts. */
  readonly drainStartedAt?: string;
  /** Running tasks when last checked during a drain. */
  readonly runningTasks?: number;
  /** The binding state last published on `icepack.bindings`. */
  readonly publishedState?: BindingState;
}

export function newGroupRecord(
  group: ResourceGroup,
  mode: ProvisionerMode,
  now: string,
): GroupRecord {
  const steps = Object.fromEntries(
    GROUP_STEPS.map((step) => {
      if (step === GroupStep.persisted) return [step, { state: StepState.done, at: now }];
      if (mode === ProvisionerMode.local && KUBERNETES_STEPS.includes(step)) {
        return [step, { state: StepState.skipped, at: now, message: 'local mode: no Kubernetes' }];
      }
      return [step, { state: StepState.pending, at: now }];
    }),
  ) as Record<GroupStep, StepStatus>;
  return { group, mode, phase: GroupPhase.provisioning, steps, createdAt: now, updatedAt: now };
}

export function withStep(
  record: GroupRecord,
  step: GroupStep,
  state: StepState,
  now: string,
  message?: string,
): GroupRecord {
  const status: StepStatus =
    message === undefined ? { state, at: now } : { state, at: now, message };
  return { ...record, steps: { ...record.steps, [step]: status }, updatedAt: now };
}

export function withPhase(record: GroupRecord, phase: GroupPhase, now: string): GroupRecord {
  return { ...record, phase, updatedAt: now };
}

/** The group as the API shows it: its definition plus a status with every step in order. */
export function groupView(record: GroupRecord) {
  return {
    ...record.group,
    status: {
      phase: record.phase,
      mode: record.mode,
      namespace: namespaceForGroup(record.group.name),
      steps: GROUP_STEPS.map((name) => ({ name, ...record.steps[name] })),
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
      ...(record.drainStartedAt === undefined ? {} : { drainStartedAt: record.drainStartedAt }),
      ...(record.runningTasks === undefined ? {} : { runningTasks: record.runningTasks }),
    },
  };
}
export type GroupView = ReturnType<typeof groupView>;
