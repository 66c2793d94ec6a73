// Combines the rules with what is already pending into one decision per task type.
import { taskJobId, type TableState, type Task, type TaskType } from '@icepack/types';
import type { Policy, PolicyProblem } from './policy.ts';
import {
  cleanupRule,
  deleteFiles,
  mergeRule,
  rewritesPositionDeletes,
  sortPlan,
  sortRule,
  type PendingTasks,
  type RuleResult,
} from './rules.ts';
import { DEFAULT_SCORE_OPTIONS, scoreTask, type ScoreOptions } from './score.ts';

/**
 * What to do with the task of one type:
 * - `create`: enqueue a new task (event `planned`);
 * - `update`: a newer state for a waiting task: new data and priority (event `updated`);
 * - `remove`: drop the waiting task (event `superseded` or `skipped`);
 * - `none`: nothing to do (the reason says why).
 */
export const PlanAction = {
  create: 'create',
  update: 'update',
  remove: 'remove',
  none: 'none',
} as const;
export type PlanAction = (typeof PlanAction)[keyof typeof PlanAction];

export interface TaskDecision {
  readonly type: TaskType;
  readonly taskId: string;
  readonly action: PlanAction;
  /** For `remove`: the event status to publish. */
  readonly removal?: 'superseded' | 'skipped';
  /** One sentence for people: the fired factors, or why nothing happens. */
  readonly reason: string;
  readonly rule: RuleResult;
  /** The task to enqueue (`create`) or the new job data (`update`). */
  readonly task?: Task;
}

export interface TablePlan {
  readonly paused: boolean;
  readonly pausedBy: 'catalog' | 'table' | null;
  readonly decisions: readonly TaskDecision[];
  readonly problems: readonly PolicyProblem[];
}

export interface PlanInput {
  readonly state: TableState;
  readonly policy: Policy;
  readonly problems?: readonly PolicyProblem[];
  readonly pending: PendingTasks;
  readonly now: Date;
  readonly scoreOptions?: ScoreOptions;
}

function fired(rule: RuleResult): string {
  return rule.factors
    .filter((f) => f.met && f.threshold !== undefined)
    .map((f) => f.text)
    .join(', ');
}

function buildTask(type: TaskType, input: PlanInput): Task {
  const { state, policy, now } = input;
  const createdAt = input.pending[type]?.createdAt ?? now.toISOString();
  const waited = now.getTime() - Date.parse(createdAt);
  const score = scoreTask(type, state, policy, waited, input.scoreOptions ?? DEFAULT_SCORE_OPTIONS);
  const base = {
    id: taskJobId(state.table, type),
    table: state.table,
    score,
    createdAt,
  };
  const deletes = deleteFiles(state);
  if (type === 'cleanup') {
    return {
      ...base,
      type,
      parameters: {
        olderThan: new Date(now.getTime() - policy.maxSnapshotAgeMs).toISOString(),
        retainLast: policy.minSnapshotsToKeep,
        retentionMs: policy.maxSnapshotAgeMs,
      },
      state: {
        metadataLocation: state.metadataLocation,
        snapshotId: state.currentSnapshotId,
        bytesToRewrite: 0,
        filesToRewrite: 0,
      },
    };
  }
  const merge = {
    targetFileSizeBytes: policy.targetFileSizeBytes,
    minFileSizeBytes: policy.minFileSizeBytes,
    maxFileSizeBytes: policy.maxFileSizeBytes,
    minInputFiles: policy.minInputFiles,
    deleteFileThreshold: policy.perFileDeleteThreshold,
    rewritePositionDeletes: rewritesPositionDeletes(state, policy),
  };
  if (type === 'merge') {
    return {
      ...base,
      type,
      parameters: merge,
      state: {
        metadataLocation: state.metadataLocation,
        snapshotId: state.currentSnapshotId,
        bytesToRewrite: state.files.smallFileBytes + state.files.deleteFileBytes,
        filesToRewrite: state.files.smallFiles + deletes,
      },
    };
  }
  const order = sortPlan(state, policy);
  return {
    ...base,
    type,
    parameters: {
      ...merge,
      strategy: order?.strategy ?? 'sort',
      columns: (order?.columns ?? []).map((c) => ({ ...c })),
    },
    state: {
      metadataLocation: state.metadataLocation,
      snapshotId: state.currentSnapshotId,
      // A sort rewrites the new data as well as the small files.
      bytesToRewrite:
        Math.max(state.newData.bytes, state.files.smallFileBytes) + state.files.deleteFileBytes,
      filesToRewrite: Math.max(state.newData.files, state.files.smallFiles) + deletes,
    },
  };
}

function decide(
  type: TaskType,
  rule: RuleResult,
  input: PlanInput,
  blockedBy: string | null,
): TaskDecision {
  const taskId = taskJobId(input.state.table, type);
  const pending = input.pending[type];
  const waiting = pending?.status === 'waiting';
  const none = (reason: string): TaskDecision => ({ type, taskId, action: 'none', reason, rule });
  const remove = (removal: 'superseded' | 'skipped', reason: string): TaskDecision => ({
    type,
    taskId,
    action: 'remove',
    removal,
    reason,
    rule,
  });

  if (blockedBy !== null) return waiting ? remove('skipped', blockedBy) : none(blockedBy);
  if (rule.fires)
    return {
      type,
      taskId,
      action: 'create',
      reason: fired(rule),
      rule,
      task: buildTask(type, input),
    };
  const blockers = rule.blockers.join('; ');
  if (rule.needed && waiting && rule.blockers.length === 1) {
    // Only "already waiting" stands in the way: the newer state refreshes that task.
    return {
      type,
      taskId,
      action: 'update',
      reason: fired(rule),
      rule,
      task: buildTask(type, input),
    };
  }
  if (waiting && !rule.needed) return remove('skipped', `no longer needed: ${blockers}`);
  return none(blockers);
}

/**
 * Decides, for each task type, what the planner does with this table state. Pure: the
 * caller supplies what is pending and the clock.
 */
export function planTable(input: PlanInput): TablePlan {
  const { policy, state, pending } = input;
  const paused =
    policy.pausedBy === null
      ? null
      : `paused: icepack.enabled=false on the ${policy.pausedBy}; no new tasks`;
  const gate = (type: TaskType): string | null =>
    paused ?? (policy.taskTypes[type] ? null : `disabled: icepack.${type}.enabled=false`);

  const cleanup = decide('cleanup', cleanupRule(state, policy, pending), input, gate('cleanup'));
  const sortResult = sortRule(state, policy, pending);
  const sort = decide('sort', sortResult, input, gate('sort'));
  const sortWins = sort.action === 'create' || sort.action === 'update';

  const mergeResult = mergeRule(state, policy, pending);
  let merge = decide('merge', mergeResult, input, gate('merge'));
  if (sortWins) {
    const sortId = taskJobId(state.table, 'sort');
    merge =
      pending.merge?.status === 'waiting'
        ? {
            ...merge,
            action: 'remove',
            removal: 'superseded',
            reason: `superseded by ${sortId}: a sort also compacts`,
          }
        : merge.action === 'create'
          ? {
              ...merge,
              action: 'none',
              task: undefined,
              reason: `${sortId} is planned instead: a sort also compacts`,
            }
          : merge;
  }
  return {
    paused: paused !== null,
    pausedBy: policy.pausedBy,
    decisions: [cleanup, merge, sort],
    problems: input.problems ?? [],
  };
}
