// Combines the rules with what is already pending into one decision per task type.
import { taskJobId, type TableState, type Task, type TaskType } from '@icepack/types';
import {
  measuredUnderOtherPolicy,
  type PausedBy,
  type Policy,
  type PolicyProblem,
} from '@icepack/policy';
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
  /** What holds the type back whatever the rule says, when something does. */
  readonly blocked?: Blocked;
  /** One sentence for people: the fired factors, or why nothing happens. */
  readonly reason: string;
  readonly rule: RuleResult;
  /** The task to enqueue (`create`) or the new job data (`update`). */
  readonly task?: Task;
}

/** Why a type gets no task whatever its rule says. */
export const Blocked = {
  paused: 'paused',
  disabled: 'disabled',
  gcDisabled: 'gc-disabled',
} as const;
export type Blocked = (typeof Blocked)[keyof typeof Blocked];

export interface TablePlan {
  readonly paused: boolean;
  readonly pausedBy: PausedBy;
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
        tableUuid: state.tableUuid,
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
        tableUuid: state.tableUuid,
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
      tableUuid: state.tableUuid,
      metadataLocation: state.metadataLocation,
      snapshotId: state.currentSnapshotId,
      // A sort rewrites the new data as well as the small files.
      bytesToRewrite:
        Math.max(state.newData.bytes, state.files.smallFileBytes) + state.files.deleteFileBytes,
      filesToRewrite: Math.max(state.newData.files, state.files.smallFiles) + deletes,
    },
  };
}

interface Block {
  readonly kind: Blocked;
  readonly reason: string;
}

function decide(
  type: TaskType,
  rule: RuleResult,
  input: PlanInput,
  block: Block | null,
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

  if (block !== null) {
    const d = waiting ? remove('skipped', block.reason) : none(block.reason);
    return { ...d, blocked: block.kind };
  }
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
  const { policy, state, pending, now } = input;
  const paused: Block | null =
    policy.pausedBy === null
      ? null
      : {
          kind: Blocked.paused,
          reason:
            policy.pausedBy === 'console'
              ? 'paused from the console; no new tasks'
              : `paused: icepack.enabled=false on the ${policy.pausedBy}; no new tasks`,
        };
  const gate = (type: TaskType): Block | null => {
    if (paused !== null) return paused;
    if (!policy.taskTypes[type])
      return { kind: Blocked.disabled, reason: `disabled: icepack.${type}.enabled=false` };
    if (type === 'cleanup' && !policy.gcEnabled) {
      return {
        kind: Blocked.gcDisabled,
        reason: `gc.enabled=false on the table: Iceberg refuses to expire its snapshots, so no cleanup runs`,
      };
    }
    return null;
  };

  const cleanup = decide(
    'cleanup',
    cleanupRule(state, policy, pending, now),
    input,
    gate('cleanup'),
  );
  const sortResult = sortRule(state, policy, pending, now);
  const sort = decide('sort', sortResult, input, gate('sort'));
  const sortWins = sort.action === 'create' || sort.action === 'update';

  const mergeResult = mergeRule(state, policy, pending, now);
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
  // The small-file figures mean what the rules assume only if the scanner measured them
  // with the bound in force.
  const mismatch = measuredUnderOtherPolicy(state.files.smallFileThresholdBytes, policy);
  return {
    paused: paused !== null,
    pausedBy: policy.pausedBy,
    decisions: [cleanup, merge, sort],
    problems: [...(input.problems ?? []), ...(mismatch === null ? [] : [mismatch])],
  };
}

/**
 * The `skipped` event a cleanup held back by `gc.enabled=false` gets: once, when it first
 * would have run (the previous plan of the table did not already say so), not on every scan.
 */
export function gcSkip(plan: TablePlan, previous: TablePlan | undefined): string | undefined {
  const blockedNow = (p: TablePlan | undefined): TaskDecision | undefined => {
    const d = p?.decisions.find((x) => x.type === 'cleanup');
    return d?.blocked === Blocked.gcDisabled && d.rule.needed ? d : undefined;
  };
  const d = blockedNow(plan);
  if (d === undefined || blockedNow(previous) !== undefined) return undefined;
  const because = d.rule.factors.filter((f) => f.met && !f.factor.startsWith('pending-'));
  return `${d.reason} (it would: ${because.map((f) => f.text).join(', ')})`;
}
