import { PolicyKeys } from '@icepack/policy';
import { sampleMergeTask } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { problemTaskType, sortCreateSkip, updateChangesNothing } from './apply-plan.ts';

describe('problemTaskType', () => {
  it.each([
    [PolicyKeys.snapshotThreshold, 'cleanup'],
    [PolicyKeys.cleanupMinInterval, 'cleanup'],
    [PolicyKeys.maxSnapshotAgeMs, 'cleanup'],
    [PolicyKeys.zorderColumns, 'sort'],
    [PolicyKeys.hilbertColumns, 'sort'],
    [PolicyKeys.newDataShare, 'sort'],
    [PolicyKeys.sortEnabled, 'sort'],
    [PolicyKeys.targetFileSizeBytes, 'merge'],
    [PolicyKeys.enabled, 'merge'],
    [PolicyKeys.orphanMinAge, 'orphans'],
    [PolicyKeys.orphanEnabled, 'orphans'],
    // Unknown keys (typos): by their icepack.<type>. prefix, else merge.
    ['icepack.sort.colums', 'sort'],
    ['icepack.cleanup.enabeld', 'cleanup'],
    ['icepack.orphan.min-aeg', 'orphans'],
    ['icepack.snapshots-threshold', 'merge'],
  ])('%s → %s', (key, type) => {
    expect(problemTaskType({ key })).toBe(type);
  });

  it('names a type for every known key from the table, not from the key text', () => {
    // `icepack.history.expire.min-snapshots-to-keep` has no type in its text.
    expect(problemTaskType({ key: PolicyKeys.minSnapshotsToKeep })).toBe('cleanup');
  });
});

describe('sortCreateSkip', () => {
  it('holds a sort back only while the merge it replaces is still there', () => {
    expect(sortCreateSkip('sort', true)).toMatch(/merge it would replace started running/);
    expect(sortCreateSkip('sort', false)).toBeNull();
    expect(sortCreateSkip('merge', true)).toBeNull();
    expect(sortCreateSkip('cleanup', true)).toBeNull();
  });
});

describe('updateChangesNothing', () => {
  const task = sampleMergeTask();

  it('is true for the same metadata and parameters written alike (a re-scan)', () => {
    const stored = JSON.parse(JSON.stringify(task)) as typeof task;
    expect(updateChangesNothing(stored, task)).toBe(true);
  });

  it('is true for the same metadata and parameters, whatever their key order', () => {
    const reordered = Object.fromEntries(
      Object.entries(task.parameters).reverse(),
    ) as typeof task.parameters;
    expect(updateChangesNothing(task, { ...task, parameters: reordered })).toBe(true);
  });

  it('is false for new metadata, other parameters, or no waiting task', () => {
    expect(
      updateChangesNothing(task, {
        ...task,
        state: { ...task.state, metadataLocation: 'file:///other.metadata.json' },
      }),
    ).toBe(false);
    expect(
      updateChangesNothing(task, {
        ...task,
        parameters: { ...task.parameters, minInputFiles: 99 },
      }),
    ).toBe(false);
    expect(updateChangesNothing(undefined, task)).toBe(false);
  });
});
