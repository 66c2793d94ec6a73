// Size classes of tasks, so a catalog's large tables cannot hold every slot while its small
// ones wait (issue 18, ADR 0029). Pure; the task worker admits a large task only while fewer
// than the binding's `slots` large runs hold a lane claim, and runs `slots + smallSlots` tasks
// at once, so at least `smallSlots` of them are always free for small tasks.
import type { Binding, Task } from '@icepack/types';

const GiB = 1024 * 1024 * 1024;

/**
 * The bound below which a task is *small*: cheap to run, few minutes of Spark. Batching
 * (`domain/batch.ts`) groups tasks under the same bound, so a task that rides in a batch is
 * one that the small lane would run: one home for "small".
 */
export interface SmallTaskBound {
  /** A merge or sort rewrites less than this many bytes. Default 1 GiB. */
  readonly bytes: number;
  /** … and at most this many files. Default 500 (one executor core's worth, as sizing counts). */
  readonly files: number;
  /**
   * A cleanup (snapshot expiry) rewrites nothing; its cost grows with the snapshots it walks
   * and the files it deletes. Small while the table has at most this many. Default 10,000.
   */
  readonly cleanupSnapshots: number;
}

export const SMALL_TASK_BOUND: SmallTaskBound = {
  bytes: GiB,
  files: 500,
  cleanupSnapshots: 10_000,
};

export const Lane = {
  /** Runs in any slot, also the `smallSlots` that large tasks may not take. */
  small: 'small',
  /** Runs only in one of the binding's `slots`. */
  large: 'large',
} as const;
export type Lane = (typeof Lane)[keyof typeof Lane];

/**
 * The reason on the `updated` task event of a large task put back because the catalog's
 * `slots` are all held by large runs (metrics tell it from a quota wait by it).
 */
export const LARGE_SLOTS_BUSY = 'waiting: large-task slots busy';

/** The planner's `snapshots` score part: the table's snapshot count when it was scanned. */
const SNAPSHOTS_FACTOR = 'snapshots';

/** Whether a task is small or large (`SMALL_TASK_BOUND`). */
export function laneOf(task: Task, bound: SmallTaskBound = SMALL_TASK_BOUND): Lane {
  if (task.type === 'cleanup') {
    // The task carries no snapshot count of its own; its score does (the planner scores a
    // cleanup by the table's snapshots). No such part: nothing says it is big.
    const snapshots = task.score.parts.find((p) => p.factor === SNAPSHOTS_FACTOR)?.value ?? 0;
    return snapshots > bound.cleanupSnapshots ? Lane.large : Lane.small;
  }
  const { bytesToRewrite, filesToRewrite } = task.state;
  return bytesToRewrite < bound.bytes && filesToRewrite <= bound.files ? Lane.small : Lane.large;
}

/** Tasks of a binding's catalog that run at once, across dispatchers: both lanes. */
export function concurrencyOf(binding: Pick<Binding, 'slots' | 'smallSlots'>): number {
  return binding.slots + binding.smallSlots;
}
