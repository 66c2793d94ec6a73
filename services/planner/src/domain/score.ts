// Task scores: higher runs first. The parts are kept with the task so a score explains itself.
import {
  MAX_PRIORITY,
  MIN_PRIORITY,
  type TableState,
  type TaskScore,
  type TaskType,
} from '@icepack/types';
import type { Policy } from '@icepack/policy';
import { deleteFiles } from './rules.ts';

export interface ScoreOptions {
  /**
   * Starting points per task type; merge and sort start above cleanup, orphans (storage only,
   * no reader is slowed) below it. Default 100 / 1000 / 1000 / 50.
   */
  readonly basePoints: Readonly<Record<TaskType, number>>;
  /** Snapshots per cleanup step. Default 50. */
  readonly snapshotStep: number;
  /** Points per snapshot step. Default 50. */
  readonly snapshotStepPoints: number;
  /** Small files per merge/sort step. Default 20. */
  readonly smallFileStep: number;
  /** Points per small-file step. Default 50. */
  readonly smallFileStepPoints: number;
  /** Delete files per merge/sort step. Default 10. */
  readonly deleteFileStep: number;
  /** Points per delete-file step (deletes slow every read, so they weigh more). Default 100. */
  readonly deleteFileStepPoints: number;
  /**
   * Bytes per orphans step of the reclaimable estimate (the table's live bytes: the scanner
   * lists no storage, and a table's orphans grow with what is written to it). Default 10 GiB.
   */
  readonly orphanBytesStep: number;
  /** Points per orphans step. Default 10. */
  readonly orphanBytesStepPoints: number;
  /** Steps counted per factor at most, so one huge table cannot swamp aging. Default 100. */
  readonly maxSteps: number;
  /** Waiting time per aging step. Default 5 minutes. */
  readonly agingStepMs: number;
  /** Points per aging step. Default 25: a fresh cleanup overtakes a fresh merge after 3 h. */
  readonly agingStepPoints: number;
  /**
   * A task that has waited this long is overdue: it runs before every task that is not, and
   * overdue tasks run oldest first, whatever their points (ADR 0028). 0 = off. Default 15 min.
   */
  readonly overdueAfterMs: number;
}

export const DEFAULT_SCORE_OPTIONS: ScoreOptions = {
  basePoints: { cleanup: 100, merge: 1000, sort: 1000, orphans: 50 },
  snapshotStep: 50,
  snapshotStepPoints: 50,
  smallFileStep: 20,
  smallFileStepPoints: 50,
  deleteFileStep: 10,
  deleteFileStepPoints: 100,
  orphanBytesStep: 10 * 1024 ** 3,
  orphanBytesStepPoints: 10,
  maxSteps: 100,
  agingStepMs: 5 * 60 * 1000,
  agingStepPoints: 25,
  overdueAfterMs: 15 * 60 * 1000,
};

/**
 * The priority of every overdue task: one below "run now", above any score. Equal priorities
 * run in creation order (BullMQ's FIFO counter, which the planner's updates keep), so overdue
 * tasks run oldest first.
 */
export const OVERDUE_PRIORITY = MIN_PRIORITY + 1;

export type ScorePart = TaskScore['parts'][number];

export const ScoreFactor = {
  base: 'base',
  snapshots: 'snapshots',
  smallFiles: 'small-files',
  deleteFiles: 'delete-files',
  /** Orphans: the bytes a run may reclaim, estimated by the table's live bytes. */
  reclaimableEstimate: 'reclaimable-estimate',
  waiting: 'waiting',
  /** An operator's "run now" from the console (ADR 0024): no points, the front of the queue. */
  runNow: 'run-now',
  /** Waited `overdueAfterMs` or longer: no points, ahead of every task not overdue (ADR 0028). */
  overdue: 'overdue',
} as const;

function stepped(
  factor: string,
  value: number,
  threshold: number,
  step: number,
  points: number,
  maxSteps: number,
): ScorePart {
  const steps = step > 0 ? Math.min(Math.floor(value / step), maxSteps) : 0;
  return { factor, value, threshold, points: steps * points };
}

/** Points for waiting `waitedMs`: one step per `agingStepMs`, uncapped so nothing starves. */
export function agingPart(
  waitedMs: number,
  options: ScoreOptions = DEFAULT_SCORE_OPTIONS,
): ScorePart {
  const waited = Math.max(0, waitedMs);
  const steps = options.agingStepMs > 0 ? Math.floor(waited / options.agingStepMs) : 0;
  return {
    factor: ScoreFactor.waiting,
    value: waited,
    threshold: options.agingStepMs,
    points: steps * options.agingStepPoints,
  };
}

/**
 * The parts for waiting `waitedMs`: the aging points, and the `overdue` part once the task
 * has waited `overdueAfterMs`. Points alone cannot be fair: a merge's state points (up to
 * 16,000) outweigh a cleanup's for days of aging, so a busy slot would never reach the
 * cleanup; the overdue tier bounds every task's wait instead.
 */
export function waitingParts(
  waitedMs: number,
  options: ScoreOptions = DEFAULT_SCORE_OPTIONS,
): ScorePart[] {
  const aging = agingPart(waitedMs, options);
  const overdue = options.overdueAfterMs > 0 && aging.value >= options.overdueAfterMs;
  return overdue
    ? [
        aging,
        {
          factor: ScoreFactor.overdue,
          value: aging.value,
          threshold: options.overdueAfterMs,
          points: 0,
        },
      ]
    : [aging];
}

/** The parts that come from the table state (everything but waiting). */
export function stateParts(
  type: TaskType,
  state: TableState,
  policy: Policy,
  options: ScoreOptions = DEFAULT_SCORE_OPTIONS,
): ScorePart[] {
  const parts: ScorePart[] = [
    { factor: ScoreFactor.base, value: 1, points: options.basePoints[type] },
  ];
  if (type === 'orphans') {
    parts.push(
      stepped(
        ScoreFactor.reclaimableEstimate,
        state.files.dataBytes + state.files.deleteFileBytes,
        options.orphanBytesStep,
        options.orphanBytesStep,
        options.orphanBytesStepPoints,
        options.maxSteps,
      ),
    );
  } else if (type === 'cleanup') {
    parts.push(
      stepped(
        ScoreFactor.snapshots,
        state.snapshots.total,
        policy.snapshotThreshold,
        options.snapshotStep,
        options.snapshotStepPoints,
        options.maxSteps,
      ),
    );
  } else {
    parts.push(
      stepped(
        ScoreFactor.deleteFiles,
        deleteFiles(state),
        policy.deleteFileThreshold,
        options.deleteFileStep,
        options.deleteFileStepPoints,
        options.maxSteps,
      ),
      stepped(
        ScoreFactor.smallFiles,
        state.files.smallFiles,
        policy.smallFileThreshold,
        options.smallFileStep,
        options.smallFileStepPoints,
        options.maxSteps,
      ),
    );
  }
  return parts;
}

/**
 * Score → BullMQ priority: `MAX_PRIORITY - total`, clamped to OVERDUE_PRIORITY + 1 ..
 * MAX_PRIORITY. Lower runs first, so a higher score gives a lower number; never 0 (0 would
 * jump every queue), and never the "run now" or overdue tier, whatever the points.
 */
export function priorityForScore(total: number): number {
  const p = MAX_PRIORITY - Math.round(total);
  return Math.min(MAX_PRIORITY, Math.max(OVERDUE_PRIORITY + 1, p));
}

/**
 * Sums parts into a score with its priority; a score with a `run-now` part gets the highest
 * priority, `MIN_PRIORITY` (ahead of every other task; among raised tasks, the oldest first),
 * one with an `overdue` part `OVERDUE_PRIORITY` (next; among them, the oldest first).
 */
export function scoreFromParts(parts: readonly ScorePart[]): TaskScore {
  const total = parts.reduce((sum, p) => sum + p.points, 0);
  const priority = isRunNow({ parts })
    ? MIN_PRIORITY
    : parts.some((p) => p.factor === ScoreFactor.overdue)
      ? OVERDUE_PRIORITY
      : priorityForScore(total);
  return { total, priority, parts: [...parts] };
}

/** Was the task raised with "run now"? */
export function isRunNow(score: { readonly parts: readonly ScorePart[] }): boolean {
  return score.parts.some((p) => p.factor === ScoreFactor.runNow);
}

/** The score raised to the front of its catalog's queue ("run now"); the points unchanged. */
export function runNowScore(score: TaskScore): TaskScore {
  if (isRunNow(score)) return score;
  return scoreFromParts([...score.parts, { factor: ScoreFactor.runNow, value: 1, points: 0 }]);
}

/**
 * The score a re-planned waiting task gets: the new one, still raised if the waiting one was
 * (a newer table state or parameters must not undo an operator's "run now").
 */
export function keepRunNow(
  waiting: { readonly parts: readonly ScorePart[] } | undefined,
  next: TaskScore,
): TaskScore {
  return waiting !== undefined && isRunNow(waiting) ? runNowScore(next) : next;
}

/** Replaces the waiting parts of a score (the aging pass). */
export function withAging(
  score: TaskScore,
  waitedMs: number,
  options: ScoreOptions = DEFAULT_SCORE_OPTIONS,
): TaskScore {
  const parts = score.parts.filter(
    (p) => p.factor !== ScoreFactor.waiting && p.factor !== ScoreFactor.overdue,
  );
  return scoreFromParts([...parts, ...waitingParts(waitedMs, options)]);
}

/** The full score of a task of `type` on `state` that has waited `waitedMs`. */
export function scoreTask(
  type: TaskType,
  state: TableState,
  policy: Policy,
  waitedMs: number,
  options: ScoreOptions = DEFAULT_SCORE_OPTIONS,
): TaskScore {
  return scoreFromParts([
    ...stateParts(type, state, policy, options),
    ...waitingParts(waitedMs, options),
  ]);
}
