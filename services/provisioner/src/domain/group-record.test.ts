import { parseResourceGroup } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { bindingOf } from './binding-of.ts';
import {
  GroupPhase,
  GroupStep,
  groupView,
  newGroupRecord,
  StepState,
  withPhase,
  withStep,
} from './group-record.ts';

const group = parseResourceGroup({
  name: 'sales',
  catalog: 'lake',
  cpu: '8',
  memory: '32Gi',
  slots: 2,
});
const t0 = '2026-01-01T00:00:00.000Z';

describe('group record', () => {
  it('starts persisted with every Kubernetes step pending, in the order of architecture.md', () => {
    const view = groupView(newGroupRecord(group, 'kubernetes', t0));
    expect(view.status.steps.map((s) => `${s.name}:${s.state}`)).toEqual([
      'persisted:done',
      'namespace:pending',
      'resourceQuota:pending',
      'limitRange:pending',
      'configMap:pending',
      'serviceAccount:pending',
      'role:pending',
      'roleBinding:pending',
      'ready:pending',
      'bindingPublished:pending',
    ]);
    expect(view.status).toMatchObject({
      phase: 'provisioning',
      namespace: 'icepack-sales',
      mode: 'kubernetes',
    });
  });

  it('skips the Kubernetes steps in local mode and says why', () => {
    const record = newGroupRecord(group, 'local', t0);
    expect(record.steps.resourceQuota).toEqual({
      state: 'skipped',
      at: t0,
      message: 'local mode: no Kubernetes',
    });
    expect(record.steps.ready.state).toBe('pending');
  });

  it('records a failing step with its message and time', () => {
    const failed = withStep(
      newGroupRecord(group, 'kubernetes', t0),
      GroupStep.resourceQuota,
      StepState.failed,
      '2026-01-01T00:00:01.000Z',
      'API server down',
    );
    expect(failed.steps.resourceQuota).toEqual({
      state: 'failed',
      at: '2026-01-01T00:00:01.000Z',
      message: 'API server down',
    });
    expect(failed.updatedAt).toBe('2026-01-01T00:00:01.000Z');
  });
});

describe('bindingOf', () => {
  it('is ready with the spark-operator runner in Kubernetes, draining once deletion starts', () => {
    const record = newGroupRecord(group, 'kubernetes', t0);
    expect(bindingOf(record, t0)).toEqual({
      catalog: 'lake',
      group: 'sales',
      namespace: 'icepack-sales',
      slots: 2,
      smallSlots: 1, // the default
      cpu: '8',
      memory: '32Gi',
      spark: group.spark,
      state: 'ready',
      runner: 'spark-operator',
      updatedAt: t0,
    });
    expect(bindingOf(withPhase(record, GroupPhase.draining, t0), t0).state).toBe('draining');
    expect(bindingOf(newGroupRecord(group, 'local', t0), t0).runner).toBe('local');
  });
});
