import { tableKey, type Task } from '@icepack/types';
import { Lane, laneOf, SMALL_TASK_BOUND, type SmallTaskBound } from './lanes.ts';

const MiB = 1024 * 1024;

/**
 * Which small tasks share one Spark application (docs/dispatcher.md#batches). A session
 * start costs more than a small table's maintenance (17–55 s for tables of a few KB in
 * bench/results/lake-sim-2026-12-02.md): small tasks are batched, large ones run alone.
 * Each default is documented; operators may override them.
 */
export interface BatchLimits {
  /**
   * A task joins a batch only if it is *small* (`domain/lanes.ts`, one home for the bound:
   * the tasks a batch carries are those the small-task lane runs). Default `SMALL_TASK_BOUND`.
   */
  readonly small?: SmallTaskBound;
  /** Tasks in one batch at most. Default 20. */
  readonly maxTasks?: number;
  /** The batch's estimated duration at most (sum of its tasks' estimates). Default 10 min. */
  readonly maxDurationMs?: number;
  /** Estimated rewrite throughput of a batch's session. Default 32 MiB/s. */
  readonly bytesPerSecond?: number;
  /** Estimated cost of each task besides its bytes: load, plan, commit. Default 5 s. */
  readonly perTaskMs?: number;
}

export const DEFAULT_BATCH_LIMITS: Required<BatchLimits> = {
  small: SMALL_TASK_BOUND,
  maxTasks: 20,
  maxDurationMs: 10 * 60_000,
  bytesPerSecond: 32 * MiB,
  perTaskMs: 5_000,
};

function limitsOf(limits: BatchLimits): Required<BatchLimits> {
  return { ...DEFAULT_BATCH_LIMITS, ...limits };
}

/** The task's estimated share of a batch's time: its fixed cost plus its bytes. */
export function estimatedTaskMs(task: Task, limits: BatchLimits = {}): number {
  const l = limitsOf(limits);
  return l.perTaskMs + Math.ceil((task.state.bytesToRewrite / l.bytesPerSecond) * 1000);
}

/** Is the task small enough to share a Spark application? */
export function batchable(task: Task, limits: BatchLimits = {}): boolean {
  return laneOf(task, limitsOf(limits).small) === Lane.small;
}

/**
 * The batch the leader heads: the leader, then the candidates in their order (the queue's:
 * priority, then age) that are batchable, of the leader's catalog, on a table not yet in the
 * batch, while the count and the estimated duration stay within their bounds. A candidate
 * that does not fit is passed over, not a stop: a later, smaller one may still fit. A leader
 * that is not batchable itself runs alone (`[leader]`). The worker takes tasks of one group's
 * queue only, so one catalog is one group here.
 */
export function selectBatch(
  leader: Task,
  candidates: readonly Task[],
  limits: BatchLimits = {},
): Task[] {
  const l = limitsOf(limits);
  if (!batchable(leader, l)) return [leader];
  const batch = [leader];
  const tables = new Set([tableKey(leader.table)]);
  let durationMs = estimatedTaskMs(leader, l);
  for (const task of candidates) {
    if (batch.length >= l.maxTasks) break;
    if (task.id === leader.id || task.table.catalog !== leader.table.catalog) continue;
    if (!batchable(task, l) || tables.has(tableKey(task.table))) continue;
    const taskMs = estimatedTaskMs(task, l);
    if (durationMs + taskMs > l.maxDurationMs) continue;
    batch.push(task);
    tables.add(tableKey(task.table));
    durationMs += taskMs;
  }
  return batch;
}
