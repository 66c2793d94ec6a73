import { parseTableKey, tableKey, taskJobId, TaskType } from '@icepack/types';
import type { TableId, TableState, TaskEvent, TaskStatus } from '@icepack/types';
import type { Logger } from '@icepack/runtime';
import { withLastMaintenance } from '../domain/last-maintenance.ts';
import { gcSkip, planTable, type TablePlan, type TaskDecision } from '../domain/plan.ts';
import {
  formatProblem,
  type CatalogPolicy,
  type PausedBy,
  type Policy,
  type PolicyProblem,
  type ResolvedPolicy,
} from '@icepack/policy';
import { problemTaskType, sortCreateSkip, updateChangesNothing } from '../domain/apply-plan.ts';
import { DEFAULT_SCORE_OPTIONS, keepRunNow, type ScoreOptions } from '../domain/score.ts';
import { compareStates } from '../domain/state-order.ts';
import { EnqueueOutcome, inEnqueueSpan } from './enqueue-span.ts';
import type { LastSucceededStore, TableOutcomes } from './last-succeeded.ts';
import { PolicyCache } from './policy-cache.ts';
import { separateReads, type TableReads } from './table-reads.ts';
import type { TableStateHead, TableStateStore } from './state-store.ts';
import type { TaskEventSink } from './task-event-sink.ts';
import {
  groupsPendingFrom,
  pendingFrom,
  type JobSnapshot,
  type TableJobs,
  type TaskQueue,
} from './task-queue.ts';

/** Whether the console paused a table or its catalog (ADR 0024); `ConsoleStore` answers it. */
export interface ConsolePauses {
  pausesOf(table: TableId): Promise<{ readonly table?: unknown; readonly catalog?: unknown }>;
}

const NO_PAUSES: ConsolePauses = { pausesOf: () => Promise.resolve({}) };

async function consolePaused(pauses: ConsolePauses, table: TableId): Promise<boolean> {
  const p = await pauses.pausesOf(table);
  return p.table !== undefined || p.catalog !== undefined;
}

/** A catalog's policy (catalog-wide settings, namespace overrides): the layers above tables. */
export type CatalogPolicies = (catalog: string) => CatalogPolicy | undefined;

export interface PlannerOptions {
  readonly queue: TaskQueue;
  readonly states: TableStateStore;
  readonly events: TaskEventSink;
  readonly logger: Logger;
  /**
   * When each task type last succeeded per table, and its failures since (the back-off).
   * Default: nothing recorded (tests).
   */
  readonly lastSucceeded?: Pick<LastSucceededStore, 'outcomes' | 'delete'>;
  /** Default: no catalog policy. */
  readonly catalogPolicy?: CatalogPolicies;
  /** The console's pauses, the top policy layer, read with each state. Default: none. */
  readonly pauses?: ConsolePauses;
  /** Default `DEFAULT_SCORE_OPTIONS`. */
  readonly scoreOptions?: ScoreOptions;
  /** Default `() => new Date()`. */
  readonly clock?: () => Date;
  /**
   * How a state's table is read before it is planned (head, jobs, outcomes): `main` reads
   * them in one script (`ScriptedTableReads`). Default: the three reads on their own.
   */
  readonly reads?: TableReads;
}

/** What handling one table state did (for logs, tests and the benchmark). */
export interface HandleOutcome {
  readonly ignored?: 'older' | 'duplicate';
  readonly actions: readonly { readonly type: TaskType; readonly action: string }[];
}

/** The answer of `GET /v1/tables/{table}/plan`. */
export interface PlanExplanation {
  readonly table: TableId;
  readonly tableKey: string;
  readonly state: Pick<
    TableState,
    | 'scannedAt'
    | 'metadataLocation'
    | 'lastSequenceNumber'
    | 'currentSnapshotId'
    | 'lastMaintenance'
  >;
  readonly paused: boolean;
  readonly pausedBy: PausedBy;
  readonly policy: Policy;
  readonly problems: readonly PolicyProblem[];
  readonly decisions: readonly unknown[];
}

/** The job of a decision's type and partition group. */
function jobOf(jobs: TableJobs, d: Pick<TaskDecision, 'type' | 'group'>): JobSnapshot {
  return jobs.groups[d.type][d.group - 1] ?? { state: 'missing' };
}

/** The fired factors with thresholds, and their points, as a task event lists them. */
function eventFactors(d: TaskDecision): TaskEvent['factors'] {
  return d.rule.factors
    .filter((f) => f.met && typeof f.value === 'number' && f.threshold !== undefined)
    .map((f) => ({
      factor: f.factor,
      value: f.value as number,
      threshold: f.threshold,
      points: d.task?.score.parts.find((p) => p.factor === f.factor)?.points ?? 0,
    }));
}

/**
 * Turns table states into queued tasks: orders the state against the latest one seen,
 * plans it, applies the decisions to the catalog's queue, publishes task events, and only
 * then stores the state — so a crash anywhere before leads to a full re-plan on redelivery.
 */
export class Planner {
  readonly #o: Required<Omit<PlannerOptions, 'reads'>>;
  readonly #reads: TableReads;
  readonly #reportedProblems = new Set<string>();
  readonly #policies = new PolicyCache();

  constructor(options: PlannerOptions) {
    this.#o = {
      lastSucceeded: {
        outcomes: () => Promise.resolve({ succeeded: {}, failures: {} }),
        delete: () => Promise.resolve(),
      },
      catalogPolicy: () => undefined,
      pauses: NO_PAUSES,
      scoreOptions: DEFAULT_SCORE_OPTIONS,
      clock: () => new Date(),
      ...options,
    };
    this.#reads =
      options.reads ?? separateReads(this.#o.states, this.#o.queue, this.#o.lastSucceeded);
  }

  #resolve(state: TableState, paused: boolean): ResolvedPolicy {
    return this.#policies.resolve(this.#o.catalogPolicy(state.table.catalog), state, paused);
  }

  #plan(state: TableState, jobs: TableJobs, record: TableOutcomes, paused: boolean): TablePlan {
    const { policy, problems } = this.#resolve(state, paused);
    return planTable({
      state: withLastMaintenance(state, record.succeeded),
      failures: record.failures,
      policy,
      problems,
      pending: pendingFrom(jobs),
      groupsPending: groupsPendingFrom(jobs),
      now: this.#o.clock(),
      scoreOptions: this.#o.scoreOptions,
    });
  }

  /**
   * Plans one table state. Call it inside the state message's span: each queue write gets its
   * own `enqueue <type>` span under it, and the tasks carry that span's trace.
   */
  async handleState(state: TableState): Promise<HandleOutcome> {
    const key = tableKey(state.table);
    const log = this.#o.logger;
    // The reads in flight at once: one round trip (the job read is wasted on a stale state).
    // The stored state's head: ordering, the problems' "seen before" and the gc skip need no
    // partition list, and reading it whole was a third of the bytes per state (issue 17).
    const [{ latest, jobs, record }, paused] = await Promise.all([
      this.#reads.read(state.table),
      consolePaused(this.#o.pauses, state.table),
    ]);
    const order = compareStates(latest, state);
    if (order !== 'newer') {
      log.debug(
        { table: key, order, lastSequenceNumber: state.lastSequenceNumber },
        'table state ignored',
      );
      return { ignored: order === 'older' ? 'older' : 'duplicate', actions: [] };
    }
    const plan = this.#plan(state, jobs, record, paused);
    const events: TaskEvent[] = [];
    const at = this.#o.clock().toISOString();
    const event = (d: TaskDecision, status: TaskStatus, reason: string): TaskEvent => ({
      taskId: d.taskId,
      table: state.table,
      taskType: d.type,
      status,
      at,
      reason,
      factors: eventFactors(d),
    });

    this.#reportProblems(plan.problems, latest, state, at, events, log);
    // Only the previous plan's cleanup decision counts, and no cleanup rule reads partitions.
    const gc = gcSkip(plan, () =>
      latest === undefined
        ? undefined
        : this.#plan({ ...latest, partitions: [] }, jobs, record, paused),
    );
    const cleanupDecision = plan.decisions.find((d) => d.type === 'cleanup');
    if (gc !== undefined && cleanupDecision !== undefined) {
      log.info({ table: key }, gc);
      events.push(event(cleanupDecision, 'skipped', gc));
    }
    const actions: { type: TaskType; action: string }[] = [];
    const { catalog } = state.table;
    // Removals first: a sort may only be created once the merge it replaces is gone.
    const mergeStillWaiting = await this.#remove(state.table, plan, (d, removal) => {
      events.push(event(d, removal, d.reason));
      actions.push({ type: d.type, action: removal });
    });
    // Creates and updates touch different job ids: send them together.
    const applied = await Promise.all(
      plan.decisions.map(async (decision): Promise<TaskEvent | undefined> => {
        if (decision.task === undefined) return undefined;
        // A task raised with "run now" stays raised when re-planned (ADR 0024).
        // (The job of the decision's own partition group: only that one may have been raised.)
        const waiting = jobs.groups[decision.type][decision.group - 1]?.task?.score;
        const d = {
          ...decision,
          task: { ...decision.task, score: keepRunNow(waiting, decision.task.score) },
        };
        if (d.action === 'create') {
          const skip = sortCreateSkip(d.type, mergeStillWaiting);
          const outcome = await inEnqueueSpan(d, catalog, async (task) => {
            if (skip !== null) return EnqueueOutcome.skipped;
            return (await this.#o.queue.create(task!, jobOf(jobs, d).state))
              ? EnqueueOutcome.added
              : EnqueueOutcome.unchanged;
          });
          if (skip !== null) return event(d, 'skipped', skip);
          return outcome === EnqueueOutcome.added ? event(d, 'planned', d.reason) : undefined;
        }
        if (d.action !== 'update') return undefined;
        // Same metadata, same parameters: a re-scan of an unchanged table; nothing to say.
        if (updateChangesNothing(jobOf(jobs, d).task, d.task)) return undefined;
        const outcome = await inEnqueueSpan(d, catalog, async (task) =>
          (await this.#o.queue.update(task!)) === 'updated'
            ? EnqueueOutcome.updated
            : EnqueueOutcome.unchanged,
        );
        return outcome === EnqueueOutcome.updated ? event(d, 'updated', d.reason) : undefined;
      }),
    );
    for (const e of applied) {
      if (e === undefined) continue;
      events.push(e);
      if (e.status !== 'skipped') actions.push({ type: e.taskType, action: e.status });
    }
    // Sent together, in this order: they share the table's key, so one partition, and the
    // producer puts publishes made in one turn in one request in call order — one round trip
    // a state instead of one per event (a replica's time per state is mostly round trips).
    await Promise.all(events.map((e) => this.#o.events.publish(e)));
    await this.#o.states.put(state);
    if (actions.length > 0) log.info({ table: key, actions, paused: plan.paused }, 'planned');
    return { actions };
  }

  #reportProblems(
    problems: readonly PolicyProblem[],
    latest: TableStateHead | undefined,
    state: TableState,
    at: string,
    events: TaskEvent[],
    log: Logger,
  ): void {
    for (const problem of problems) {
      // Report a bad value when it appears, not on every scan of the table.
      // Layers above the table and a mismatch (whose reason names both bounds): once per
      // replica, kept in memory.
      const onceKey =
        problem.source === 'scan'
          ? `${tableKey(state.table)}\u0000${problem.reason}`
          : `${state.table.catalog}\u0000${problem.source === 'namespace' ? state.table.namespace.join('.') : ''}\u0000${problem.key}\u0000${problem.value}`;
      const seen =
        problem.source === 'table'
          ? latest?.properties[problem.key] === problem.value
          : this.#reportedProblems.has(onceKey);
      if (problem.source !== 'table') this.#reportedProblems.add(onceKey);
      if (seen) continue;
      log.warn(
        { key: problem.key, value: problem.value, source: problem.source },
        formatProblem(problem),
      );
      const type = problemTaskType(problem);
      events.push({
        taskId: `${type}/${tableKey(state.table)}`,
        table: state.table,
        taskType: type,
        status: 'skipped',
        at,
        reason: formatProblem(problem),
      });
    }
  }

  /**
   * Applies the plan's removals; calls `removed` for each job removed. True when a merge to
   * remove was running meanwhile (so no sort may be created beside it).
   */
  async #remove(
    table: TableId,
    plan: TablePlan,
    removed: (d: TaskDecision, removal: 'superseded' | 'skipped') => void,
  ): Promise<boolean> {
    let mergeStillWaiting = false;
    for (const d of plan.decisions.filter((x) => x.action === 'remove')) {
      const removal = d.removal ?? 'skipped';
      const outcome = await inEnqueueSpan(d, table.catalog, async () =>
        (await this.#o.queue.removeWaiting(table, d.type, d.group))
          ? EnqueueOutcome[removal]
          : EnqueueOutcome.unchanged,
      );
      if (outcome !== EnqueueOutcome.unchanged) removed(d, removal);
      else if (d.type === 'merge') mergeStillWaiting = true; // it started running meanwhile
    }
    return mergeStillWaiting;
  }

  /**
   * Plans a stored state again (the re-plan pass, decision 0005): creates the tasks its
   * rules call for now, so a task that failed or was lost comes back without a new commit
   * and snapshots that aged past the retention get their cleanup. Only creates — the next
   * table state updates or removes — and only what the rules allow: a task of a type that
   * succeeded within its minimum interval does not come back.
   */
  async replan(state: TableState): Promise<HandleOutcome> {
    return this.#replan(state, false);
  }

  /**
   * Applies a console pause or resume of the table now (ADR 0024), from its stored state:
   * paused, its waiting tasks go (`skipped`, "paused from the console"); resumed, it gets the
   * tasks its rules call for, as the re-plan pass would create them. Nothing without a
   * stored state.
   */
  async reconsider(key: string): Promise<HandleOutcome> {
    const state = await this.#o.states.get(key);
    return state === undefined ? { actions: [] } : this.#replan(state, true);
  }

  /**
   * {@link reconsider} for every stored table of the catalog (a catalog paused or resumed from
   * the console): a walk of its stored states, a few tables at once. The actions taken.
   */
  async reconsiderCatalog(catalog: string, concurrency = 8): Promise<number> {
    let cursor = '0';
    let actions = 0;
    do {
      const page = await this.#o.states.page(cursor, 500, catalog);
      cursor = page.cursor;
      const states = [...page.states];
      const worker = async (): Promise<void> => {
        for (let state = states.shift(); state !== undefined; state = states.shift()) {
          const done = await this.#replan(state, true);
          actions += done.actions.length;
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
    } while (cursor !== '0');
    return actions;
  }

  async #replan(state: TableState, removals: boolean): Promise<HandleOutcome> {
    const key = tableKey(state.table);
    const [jobs, record, paused] = await Promise.all([
      this.#o.queue.inspect(state.table),
      this.#o.lastSucceeded.outcomes(key),
      consolePaused(this.#o.pauses, state.table),
    ]);
    const plan = this.#plan(state, jobs, record, paused);
    const at = this.#o.clock().toISOString();
    const actions: { type: TaskType; action: string }[] = [];
    const published: Promise<void>[] = [];
    const mergeStillWaiting =
      removals && plan.paused
        ? await this.#remove(state.table, plan, (d, removal) => {
            published.push(
              this.#o.events.publish({
                taskId: d.taskId,
                table: state.table,
                taskType: d.type,
                status: removal,
                at,
                reason: d.reason,
                factors: eventFactors(d),
              }),
            );
            actions.push({ type: d.type, action: removal });
          })
        : false;
    await Promise.all(published);
    for (const d of plan.decisions) {
      if (d.action !== 'create' || d.task === undefined) continue;
      if (sortCreateSkip(d.type, mergeStillWaiting) !== null) continue;
      const outcome = await inEnqueueSpan(d, state.table.catalog, async (task) =>
        (await this.#o.queue.create(task!, jobOf(jobs, d).state))
          ? EnqueueOutcome.added
          : EnqueueOutcome.unchanged,
      );
      if (outcome !== EnqueueOutcome.added) continue;
      await this.#o.events.publish({
        taskId: d.taskId,
        table: state.table,
        taskType: d.type,
        status: 'planned',
        at,
        reason: `re-planned: ${d.reason}`,
        factors: eventFactors(d),
      });
      actions.push({ type: d.type, action: 'planned' });
    }
    if (actions.length > 0) this.#o.logger.info({ table: key, actions }, 're-planned');
    return { actions };
  }

  /** A tombstone: the table was dropped. Its waiting tasks go (skipped), its state too. */
  async handleDropped(key: string): Promise<HandleOutcome> {
    const table = parseTableKey(key);
    const jobs = await this.#o.queue.inspect(table);
    const groups = groupsPendingFrom(jobs);
    const actions: { type: TaskType; action: string }[] = [];
    const at = this.#o.clock().toISOString();
    for (const type of Object.values(TaskType)) {
      for (const [i, pending] of groups[type].entries()) {
        if (pending?.status !== 'waiting') continue;
        if (!(await this.#o.queue.removeWaiting(table, type, i + 1))) continue;
        await this.#o.events.publish({
          taskId: taskJobId(table, type, i + 1),
          table,
          taskType: type,
          status: 'skipped',
          at,
          reason: 'the table was dropped',
        });
        actions.push({ type, action: 'skipped' });
      }
    }
    await this.#o.states.delete(key);
    await this.#o.lastSucceeded.delete(key);
    this.#o.logger.info({ table: key, actions }, 'table dropped');
    return { actions };
  }

  /** What the planner would do now with the latest state it saw; undefined if none. */
  async explain(key: string): Promise<PlanExplanation | undefined> {
    const state = await this.#o.states.getValidated(key);
    if (state === undefined) return undefined;
    const [jobs, record, paused] = await Promise.all([
      this.#o.queue.inspect(state.table),
      this.#o.lastSucceeded.outcomes(key),
      consolePaused(this.#o.pauses, state.table),
    ]);
    const plan = this.#plan(state, jobs, record, paused);
    const { policy } = this.#resolve(state, paused);
    return {
      table: state.table,
      tableKey: key,
      state: {
        scannedAt: state.scannedAt,
        metadataLocation: state.metadataLocation,
        lastSequenceNumber: state.lastSequenceNumber,
        currentSnapshotId: state.currentSnapshotId,
        lastMaintenance: withLastMaintenance(state, record.succeeded).lastMaintenance ?? {},
      },
      paused: plan.paused,
      pausedBy: plan.pausedBy,
      policy,
      problems: plan.problems,
      decisions: plan.decisions.map((d) => ({
        type: d.type,
        taskId: d.taskId,
        action: d.action,
        ...(d.removal === undefined ? {} : { removal: d.removal }),
        reason: d.reason,
        group: d.group,
        pending: jobOf(jobs, d).state,
        fired: d.rule.factors.filter((f) => f.met).map((f) => f.text),
        notFired: d.rule.blockers,
        factors: d.rule.factors,
        ...(d.task === undefined ? {} : { parameters: d.task.parameters, score: d.task.score }),
      })),
    };
  }
}
