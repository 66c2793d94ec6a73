// Combines the rules with what is already pending into one decision per task type.
import {
  compactPartitions,
  MAX_TASK_GROUPS,
  taskJobId,
  type TableState,
  type Task,
  type TaskType,
} from '@icepack/types';
import {
  measuredUnderOtherPolicy,
  PolicyKeys,
  type PausedBy,
  type Policy,
  type PolicyProblem,
} from '@icepack/policy';
import {
  cleanupRule,
  deleteFiles,
  mergeRule,
  orphansRule,
  rewritesPositionDeletes,
  sortPlan,
  sortRule,
  type PendingTask,
  type PendingTasks,
  type RuleResult,
} from './rules.ts';
import { DEFAULT_SCORE_OPTIONS, scoreTask, type ScoreOptions } from './score.ts';
import { withBackOff, type FailureStreaks } from './back-off.ts';
import {
  hasRowLevelDeletes,
  partialProgressFor,
  partitionScope,
  rewritesNothing,
  rewriteThresholds,
  type PartitionGroup,
  type PartitionScope,
} from './partition-plan.ts';

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
  /** The partition group (1 … MAX_TASK_GROUPS): 1 for a table-wide task. */
  readonly group: number;
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
  /** Which partitions merges and sorts rewrite (docs/planner.md#partition-scoped-plans). */
  readonly scope: PartitionScope;
  readonly paused: boolean;
  readonly pausedBy: PausedBy;
  readonly decisions: readonly TaskDecision[];
  readonly problems: readonly PolicyProblem[];
}

export interface PlanInput {
  readonly state: TableState;
  readonly policy: Policy;
  readonly problems?: readonly PolicyProblem[];
  /** Per type, what is pending over all its groups (what the rules go by). */
  readonly pending: PendingTasks;
  /**
   * Per type, the pending task of each group (index 0 = group 1). Default: `pending` as group 1
   * and no other group.
   */
  readonly groupsPending?: Readonly<
    Partial<Record<TaskType, readonly (PendingTask | undefined)[]>>
  >;
  readonly now: Date;
  readonly scoreOptions?: ScoreOptions;
  /** Per type, its failures on the table since its last success (the back-off). Default none. */
  readonly failures?: FailureStreaks;
}

function fired(rule: RuleResult): string {
  const thresholds = rule.factors.filter((f) => f.met && f.threshold !== undefined);
  // A rule without thresholds (orphans: a cadence) is explained by its met work factors.
  const met =
    thresholds.length > 0
      ? thresholds
      : rule.factors.filter((f) => f.met && !f.factor.startsWith('pending-'));
  return met.map((f) => f.text).join(', ');
}

/**
 * The state as one group's task sees it: the group's small and delete files stand for the
 * table's, so its score and explanation are its own.
 */
function groupView(state: TableState, g: PartitionGroup): TableState {
  return {
    ...state,
    files: {
      ...state.files,
      smallFiles: g.smallFiles,
      smallFileBytes: g.smallFileBytes,
      positionDeleteFiles: g.deleteFiles,
      equalityDeleteFiles: 0,
      deletionVectors: 0,
      deleteFileBytes: g.deleteFileBytes,
    },
  };
}

function pendingOf(input: PlanInput, type: TaskType, group: number): PendingTask | undefined {
  const groups = input.groupsPending?.[type];
  if (groups === undefined) return group === 1 ? input.pending[type] : undefined;
  return groups[group - 1];
}

function buildTask(type: TaskType, input: PlanInput, g?: PartitionGroup): Task {
  const { policy, now } = input;
  const group = g?.group ?? 1;
  // Position deletes are judged on the table, before the group view replaces its figures.
  const rewritePositionDeletes = rewritesPositionDeletes(input.state, policy);
  const state = g === undefined ? input.state : groupView(input.state, g);
  const createdAt = pendingOf(input, type, group)?.createdAt ?? now.toISOString();
  const waited = now.getTime() - Date.parse(createdAt);
  const score = scoreTask(type, state, policy, waited, input.scoreOptions ?? DEFAULT_SCORE_OPTIONS);
  const base = {
    id: taskJobId(state.table, type, group),
    table: state.table,
    score,
    createdAt,
  };
  const deletes = deleteFiles(state);
  if (type === 'orphans') {
    return {
      ...base,
      type,
      parameters: {
        olderThan: new Date(now.getTime() - policy.orphans.minAgeMs).toISOString(),
        quarantineWindowMs: policy.orphans.quarantineWindowMs,
        maxFiles: policy.orphans.maxFiles,
      },
      state: {
        tableUuid: state.tableUuid,
        metadataLocation: state.metadataLocation,
        snapshotId: state.currentSnapshotId,
        // It rewrites nothing; the files it reads the reachable set from size its job.
        bytesToRewrite: 0,
        filesToRewrite: state.files.dataFiles + deletes,
      },
    };
  }
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
  const progress = partialProgressFor(g?.bytesToRewrite ?? 0, hasRowLevelDeletes(input.state));
  const merge = {
    targetFileSizeBytes: policy.targetFileSizeBytes,
    minFileSizeBytes: policy.minFileSizeBytes,
    maxFileSizeBytes: policy.maxFileSizeBytes,
    minInputFiles: policy.minInputFiles,
    deleteFileThreshold: policy.perFileDeleteThreshold,
    rewritePositionDeletes,
    ...(progress === undefined ? {} : { partialProgress: progress }),
    // The compact form: the columns once, values per partition — the list of predicates was
    // ~9 KB of a 10 KB task, written and read back per state (ADR 0034, issue 17).
    ...(g === undefined ? {} : { partitionSets: compactPartitions(g.filter) }),
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
  const none = (reason: string): TaskDecision => ({
    type,
    group: 1,
    taskId,
    action: 'none',
    reason,
    rule,
  });
  const remove = (removal: 'superseded' | 'skipped', reason: string): TaskDecision => ({
    type,
    group: 1,
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
      group: 1,
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
      group: 1,
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

/** The groups of a type whose task waits (1 … MAX_TASK_GROUPS). */
function waitingGroups(input: PlanInput, type: TaskType): number[] {
  const groups: number[] = [];
  for (let g = 1; g <= MAX_TASK_GROUPS; g++) {
    if (pendingOf(input, type, g)?.status === 'waiting') groups.push(g);
  }
  return groups;
}

/**
 * A merge or sort decision taken on the table (group 1's id, pending over all groups) turned
 * into one decision per partition group: a create or update becomes one task per group of the
 * scope (created where none waits, updated where one does), and waiting groups the plan no
 * longer has are removed; a removal removes every waiting group. While any group runs, the
 * rules already hold the type back (`none`): a running task is never touched.
 */
function expand(d: TaskDecision, scope: PartitionScope, input: PlanInput): TaskDecision[] {
  const { type, rule } = d;
  const table = input.state.table;
  const waiting = waitingGroups(input, type);
  const removal = (group: number, reason: string, kind: 'skipped' | 'superseded' = 'skipped') => ({
    ...d,
    group,
    taskId: taskJobId(table, type, group),
    action: 'remove' as const,
    removal: kind,
    task: undefined,
    reason,
  });
  if (d.action === 'remove') return waiting.map((g) => removal(g, d.reason, d.removal));
  if (d.action === 'none') return [d];
  const planned: TaskDecision[] = [];
  const groups: readonly (PartitionGroup | undefined)[] = scope.scoped ? scope.groups : [undefined];
  for (const g of groups) {
    const group = g?.group ?? 1;
    planned.push({
      type,
      group,
      taskId: taskJobId(table, type, group),
      action: waiting.includes(group) ? 'update' : 'create',
      reason: g === undefined ? d.reason : `${d.reason}; ${g.explanation}`,
      rule,
      task: buildTask(type, input, g),
    });
  }
  const gone = scope.scoped
    ? scope.groups.length === 0
      ? `no longer needed: ${scope.reason}`
      : `no longer needed: the plan has ${scope.groups.length} task${scope.groups.length === 1 ? '' : 's'}`
    : 'no longer needed: the table is rewritten as a whole';
  const removed = waiting
    .filter((g) => !planned.some((p) => p.group === g))
    .map((g) => removal(g, gone));
  if (planned.length === 0 && removed.length === 0) {
    return [{ ...d, action: 'none', task: undefined, reason: scope.reason }];
  }
  return [...planned, ...removed];
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
      return {
        kind: Blocked.disabled,
        reason:
          type === 'orphans'
            ? `disabled: ${PolicyKeys.orphanEnabled} is not true (off by default)`
            : `disabled: icepack.${type}.enabled=false`,
      };
    if (type === 'cleanup' && !policy.gcEnabled) {
      return {
        kind: Blocked.gcDisabled,
        reason: `gc.enabled=false on the table: Iceberg refuses to expire its snapshots, so no cleanup runs`,
      };
    }
    if (type === 'orphans' && !policy.gcEnabled) {
      return {
        kind: Blocked.gcDisabled,
        reason: `gc.enabled=false on the table: its files may be shared with other tables, so no orphans run`,
      };
    }
    return null;
  };

  // Each type backs off its own failures only: a failing merge holds back no cleanup.
  const backedOff = (rule: RuleResult): RuleResult =>
    withBackOff(rule, input.failures?.[rule.type], policy, now);
  const cleanup = decide(
    'cleanup',
    backedOff(cleanupRule(state, policy, pending, now)),
    input,
    gate('cleanup'),
  );
  // The merge rule judges the rewrite work once; the sort rule and the thresholds use its work.
  const { work, ...mergeResult } = mergeRule(state, policy, pending, now);
  // Merges and sorts are planned, and their tasks run, with the thresholds Iceberg will apply:
  // a commit-count trigger alone lowers min-input-files so the rewrite acts on the commits'
  // small files (ADR 0044), in the partitions they wrote (ADR 0047); the rules judged the
  // table with the policy as it is.
  const thresholds = rewriteThresholds(state, policy, work.commitsAlone);
  const rewriteInput: PlanInput = { ...input, policy: thresholds.policy };
  const noted = (decisions: TaskDecision[]): TaskDecision[] =>
    thresholds.notes.length === 0
      ? decisions
      : decisions.map((d) =>
          d.action === 'create' || d.action === 'update'
            ? { ...d, reason: [d.reason, ...thresholds.notes].join('; ') }
            : d,
        );
  const scope = partitionScope(state, thresholds.policy, now, thresholds.changedAfter);
  // A merge or sort Iceberg's rewrite would pick nothing in (files spread thin, an
  // unpartitioned table below its thresholds) would change nothing: none planned, a waiting
  // one removed. A sort runs the same file planner as a merge (Iceberg 1.10's
  // SparkShufflingDataRewritePlanner is a BinPackRewriteFilePlanner), so the same check holds.
  const nothing = rewritesNothing(state, thresholds.policy);
  const rewriteScope: PartitionScope =
    nothing === null ? scope : { scoped: true, groups: [], leftOut: 0, reason: nothing };
  const sortResult = backedOff(sortRule(state, policy, pending, now, work));
  const sort = noted(
    expand(decide('sort', sortResult, rewriteInput, gate('sort')), rewriteScope, rewriteInput),
  );
  const sortWins = sort.some((d) => d.action === 'create' || d.action === 'update');

  let merge = noted(
    expand(
      decide('merge', backedOff(mergeResult), rewriteInput, gate('merge')),
      rewriteScope,
      rewriteInput,
    ),
  );
  if (sortWins) {
    const sortId = taskJobId(state.table, 'sort');
    const waiting = waitingGroups(input, 'merge');
    merge =
      waiting.length > 0
        ? waiting.map((group) => ({
            ...merge[0]!,
            group,
            taskId: taskJobId(state.table, 'merge', group),
            action: 'remove' as const,
            removal: 'superseded' as const,
            task: undefined,
            reason: `superseded by ${sortId}: a sort also compacts`,
          }))
        : merge.map((d) =>
            d.action === 'create'
              ? {
                  ...d,
                  action: 'none' as const,
                  task: undefined,
                  reason: `${sortId} is planned instead: a sort also compacts`,
                }
              : d,
          );
  }
  const orphans = decide(
    'orphans',
    backedOff(orphansRule(state, policy, pending, now)),
    input,
    gate('orphans'),
  );
  // The small-file figures mean what the rules assume only if the scanner measured them
  // with the bound in force.
  const mismatch = measuredUnderOtherPolicy(state.files.smallFileThresholdBytes, policy);
  return {
    paused: paused !== null,
    pausedBy: policy.pausedBy,
    scope,
    decisions: [cleanup, ...merge, ...sort, orphans],
    problems: [...(input.problems ?? []), ...(mismatch === null ? [] : [mismatch])],
  };
}

/**
 * The `skipped` event a cleanup held back by `gc.enabled=false` gets: once, when it first
 * would have run (the previous plan of the table did not already say so), not on every scan.
 * `previous` plans the table's previous state; it is called only when this plan's cleanup is
 * held back, so the usual update plans the table once.
 */
export function gcSkip(plan: TablePlan, previous: () => TablePlan | undefined): string | undefined {
  const blockedNow = (p: TablePlan | undefined): TaskDecision | undefined => {
    const d = p?.decisions.find((x) => x.type === 'cleanup');
    return d?.blocked === Blocked.gcDisabled && d.rule.needed ? d : undefined;
  };
  const d = blockedNow(plan);
  if (d === undefined || blockedNow(previous()) !== undefined) return undefined;
  const because = d.rule.factors.filter((f) => f.met && !f.factor.startsWith('pending-'));
  return `${d.reason} (it would: ${because.map((f) => f.text).join(', ')})`;
}
