/**
 * A succeeded run's entry in the ledger (decision 0015): what it cost and what it removed,
 * from the sizing, its run time, the job's result (when the runner read it) and the table's
 * figures before and after. Pure.
 */
import type { HealthFigures, TaskBenefit, TaskCost } from '@icepack/types';

/** The job result's ledger figures (jobs/spark/icepack_job.py; docs/spark-job.md). */
export interface JobLedgerFigures {
  /** The table's snapshots when the job loaded it and after its commit. */
  readonly snapshotsBefore: number;
  readonly snapshotsAfter: number;
  /** Sums over the job's own `replace` commits. */
  readonly commits?: {
    readonly bytesRead: number;
    readonly bytesWritten: number;
    readonly filesRewritten: number;
    readonly dataFilesRemoved: number;
    readonly deleteFilesRemoved: number;
  };
  /** CPU seconds of the job's processes (local mode only). */
  readonly cpuSeconds?: number;
}

export interface LedgerInput {
  /** Cores the run was sized for: driver + executor cores × instances. */
  readonly cores: number;
  /** From `started` to the run's end (ms). */
  readonly runMs: number;
  /**
   * Time a resident session was held idle for this run (ADR 0045): its wait before the task.
   * Charged as run time: held cores are compute whether or not they work. Default 0. The
   * session's idle after its last task is its own entry (`sessionTailCost`).
   */
  readonly idleMs?: number;
  readonly job?: JobLedgerFigures;
  /** The table's figures as the dispatcher read them when the run started and after it. */
  readonly before?: HealthFigures;
  readonly after?: HealthFigures;
}

const seconds = (value: number): number => Math.round(value * 1000) / 1000;

/**
 * Cost: `cores × run time` always; CPU used, bytes and files when the job reported them.
 * Benefit: the job's own commit figures when known (writers' commits in between do not
 * count), else the table's `before − after`; none without either.
 */
export function ledgerEntry(input: LedgerInput): { cost: TaskCost; benefit?: TaskBenefit } {
  const runMs = Math.max(0, Math.round(input.runMs + (input.idleMs ?? 0)));
  const { job, before, after } = input;
  const commits = job?.commits;
  const cost: TaskCost = {
    runMs,
    coreSecondsRequested: seconds((input.cores * runMs) / 1000),
    ...(job?.cpuSeconds === undefined ? {} : { coreSecondsUsed: seconds(job.cpuSeconds) }),
    ...(commits === undefined
      ? {}
      : {
          bytesRead: commits.bytesRead,
          bytesWritten: commits.bytesWritten,
          filesRewritten: commits.filesRewritten,
        }),
  };
  const small =
    before === undefined || after === undefined
      ? {}
      : { smallFilesRemoved: before.smallFiles - after.smallFiles };
  if (job !== undefined && commits !== undefined) {
    return {
      cost,
      benefit: {
        dataFilesRemoved: commits.dataFilesRemoved,
        ...small,
        deleteFilesRemoved: commits.deleteFilesRemoved,
        snapshotsRemoved: job.snapshotsBefore - job.snapshotsAfter,
        bytesSaved: commits.bytesRead - commits.bytesWritten,
      },
    };
  }
  if (before === undefined || after === undefined) return { cost };
  return {
    cost,
    benefit: {
      dataFilesRemoved: before.dataFiles - after.dataFiles,
      ...small,
      deleteFilesRemoved: before.deleteFiles - after.deleteFiles,
      snapshotsRemoved: before.snapshots - after.snapshots,
      bytesSaved: before.bytes - after.bytes,
    },
  };
}

/**
 * What a resident session's idle tail cost (ADR 0046): the session's cores held for the time
 * it idled after its last task until it exited — compute of no task's own, in the ledger as
 * its own entry (the `ResidentSessionEnded` event), never in a task's.
 */
export function sessionTailCost(cores: number, idleMs: number): TaskCost {
  const runMs = Math.max(0, Math.round(idleMs));
  return { runMs, coreSecondsRequested: seconds((cores * runMs) / 1000) };
}
