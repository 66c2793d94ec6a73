// The decisions taken while a plan is applied to the queue: which task type a policy problem
// is reported under, whether a planned sort may still be created, and whether a waiting task
// already says what an update would. Pure; `adapters/planner.ts` only carries them out.
import { PolicyKeys, type PolicyKey, type PolicyProblem } from '@icepack/policy';
import { TaskType, type Task } from '@icepack/types';

/** The task type each policy key concerns (sizes and thresholds shared by merge and sort: merge). */
const TYPE_OF_KEY: Readonly<Record<PolicyKey, TaskType>> = {
  [PolicyKeys.enabled]: TaskType.merge,
  [PolicyKeys.cleanupEnabled]: TaskType.cleanup,
  [PolicyKeys.mergeEnabled]: TaskType.merge,
  [PolicyKeys.sortEnabled]: TaskType.sort,
  [PolicyKeys.targetFileSizeBytes]: TaskType.merge,
  [PolicyKeys.minFileSizeBytes]: TaskType.merge,
  [PolicyKeys.maxFileSizeBytes]: TaskType.merge,
  [PolicyKeys.smallFileThreshold]: TaskType.merge,
  [PolicyKeys.deleteFileThreshold]: TaskType.merge,
  [PolicyKeys.newDataShare]: TaskType.sort,
  [PolicyKeys.snapshotThreshold]: TaskType.cleanup,
  [PolicyKeys.maxSnapshotAgeMs]: TaskType.cleanup,
  [PolicyKeys.minSnapshotsToKeep]: TaskType.cleanup,
  [PolicyKeys.sortColumns]: TaskType.sort,
  [PolicyKeys.zorderColumns]: TaskType.sort,
  [PolicyKeys.hilbertColumns]: TaskType.sort,
  [PolicyKeys.mergeMaxCommits]: TaskType.merge,
  [PolicyKeys.mergeStrategy]: TaskType.merge,
  [PolicyKeys.maxBytesPerTask]: TaskType.merge,
  [PolicyKeys.minInputFiles]: TaskType.merge,
  [PolicyKeys.perFileDeleteThreshold]: TaskType.merge,
  [PolicyKeys.cleanupMinInterval]: TaskType.cleanup,
  [PolicyKeys.mergeMinInterval]: TaskType.merge,
  // The back-off applies to every type; a bad value is reported once, under merge.
  [PolicyKeys.failureBackoff]: TaskType.merge,
  [PolicyKeys.failureBackoffMax]: TaskType.merge,
  [PolicyKeys.sortMinInterval]: TaskType.sort,
  [PolicyKeys.orphanEnabled]: TaskType.orphans,
  [PolicyKeys.orphanMinAge]: TaskType.orphans,
  [PolicyKeys.orphanQuarantineWindow]: TaskType.orphans,
  [PolicyKeys.orphanInterval]: TaskType.orphans,
  [PolicyKeys.orphanMaxFiles]: TaskType.orphans,
};

/**
 * The task type under which a policy problem is reported (its `skipped` event's task id). A
 * known key by the table above; an unknown one (a typo) by its `icepack.<type>.` prefix
 * (`icepack.orphan.` for orphans), else merge.
 */
export function problemTaskType(problem: Pick<PolicyProblem, 'key'>): TaskType {
  const known = TYPE_OF_KEY[problem.key as PolicyKey] as TaskType | undefined;
  if (known !== undefined) return known;
  const prefix = /^icepack\.([a-z]+)\./.exec(problem.key)?.[1];
  // The orphans type's keys are singular (`icepack.orphan.*`), as Iceberg's procedure names them.
  if (prefix === 'orphan') return TaskType.orphans;
  return Object.values(TaskType).find((type) => type === prefix) ?? TaskType.merge;
}

/**
 * A sort the plan creates replaces the waiting merge, which the planner removes first. When
 * that merge started running meanwhile (the removal found it active), the sort is not created:
 * the reason for its `skipped` event, or null when the sort may be created.
 */
export function sortCreateSkip(type: TaskType, mergeStillRunning: boolean): string | null {
  return type === TaskType.sort && mergeStillRunning
    ? 'the merge it would replace started running; the next table state decides'
    : null;
}

/** JSON with object keys in order: equal values give equal text whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * An update that would change nothing a run uses: the waiting task was planned from the same
 * metadata with the same parameters (a re-scan of an unchanged table). Parameters compare by
 * value, not by the order their keys were written in.
 */
export function updateChangesNothing(
  waiting: Pick<Task, 'state' | 'parameters'> | undefined,
  next: Pick<Task, 'state' | 'parameters'>,
): boolean {
  if (waiting === undefined || waiting.state.metadataLocation !== next.state.metadataLocation)
    return false;
  // Written in the same key order (the planner builds both): equal text is equal value, and
  // `canonical` (~0.15 ms for a merge of 100 partitions) is only for the rest.
  return (
    JSON.stringify(waiting.parameters) === JSON.stringify(next.parameters) ||
    canonical(waiting.parameters) === canonical(next.parameters)
  );
}
