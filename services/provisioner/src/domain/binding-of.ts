import type { Binding } from '@icepack/types';
import { BindingState, namespaceForGroup, Runner } from '@icepack/types';
import type { GroupRecord } from './group-record.ts';
import { GroupPhase, ProvisionerMode } from './group-record.ts';

/** The binding dispatchers read for a group: `ready` while it runs tasks, `draining` once deletion started. */
export function bindingOf(record: GroupRecord, now: string): Binding {
  const { group } = record;
  const draining = record.phase === GroupPhase.draining || record.phase === GroupPhase.deleting;
  return {
    catalog: group.catalog,
    group: group.name,
    namespace: namespaceForGroup(group.name),
    slots: group.slots,
    smallSlots: group.smallSlots,
    cpu: group.cpu,
    memory: group.memory,
    spark: group.spark,
    state: draining ? BindingState.draining : BindingState.ready,
    runner: record.mode === ProvisionerMode.local ? Runner.local : Runner.sparkOperator,
    updatedAt: now,
  };
}
