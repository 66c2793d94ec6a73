import { z } from 'zod';
import type { TaskError } from '@icepack/types';
import { OUT_OF_MEMORY_KIND } from '../domain/resource-failure.ts';

/** Exit codes of jobs/spark/icepack_job.py (docs/spark-job.md). */
export const JobExitCode = {
  ok: 0,
  failed: 1,
  badInput: 2,
  tableNotFound: 3,
  commitConflict: 4,
  transientIo: 5,
  /** The table itself refuses the task: another UUID, paused, type switched off, GC off. */
  refused: 6,
  /** The job ran out of memory (an `OutOfMemoryError` in its Java cause chain). */
  outOfMemory: 7,
} as const;
export type JobExitCode = (typeof JobExitCode)[keyof typeof JobExitCode];

const figures = z.object({
  snapshotId: z.string().nullable(),
  snapshots: z.int(),
  dataFiles: z.int(),
  deleteFiles: z.int(),
  bytes: z.int(),
  records: z.int(),
});

const taskError = z.object({ kind: z.string(), message: z.string(), retryable: z.boolean() });

/** The one JSON line the job prints (and writes to `--result-file`). */
export const jobResultSchema = z.union([
  z.looseObject({
    ok: z.literal(true),
    taskId: z.string(),
    type: z.string(),
    exitCode: z.literal(0),
    before: figures,
    after: figures,
    durationMs: z.int(),
    /** Sums over the job's own `replace` commits (the ledger); absent from older jobs. */
    commits: z
      .object({
        bytesRead: z.int(),
        bytesWritten: z.int(),
        filesRewritten: z.int(),
        dataFilesRemoved: z.int(),
        deleteFilesRemoved: z.int(),
      })
      .optional(),
    /** CPU seconds of the run: the driver's processes, and the executors' on a cluster. */
    cpuSeconds: z.number().min(0).optional(),
    /** The most heap the executors used, their heap and the task slots sharing it. */
    memory: z
      .object({
        peakHeapBytes: z.int().min(0),
        heapBytes: z.int().min(0).optional(),
        cores: z.int().min(1),
      })
      .optional(),
    /** A resident session's wait for this task, held idle, before it started (ADR 0045). */
    idleMs: z.int().min(0).optional(),
  }),
  z.looseObject({
    ok: z.literal(false),
    taskId: z.string().nullable(),
    exitCode: z.int(),
    error: taskError,
  }),
]);
/** The job's result line: success with its figures, or failure with its error. */
export type JobOutput = z.output<typeof jobResultSchema>;
export type JobResult = Extract<JobOutput, { ok: true }>;
export type JobFailure = Extract<JobOutput, { ok: false }>;

/**
 * A figure of a batch task's outcome: advisory, so one the job wrote wrong is left out
 * (`undefined`) rather than failing the summary — that would report every task of the batch
 * lost and run the succeeded ones again.
 */
function figure<T extends z.ZodType>(schema: T) {
  return schema.optional().catch(undefined);
}

const count = z.int().min(0);

/**
 * A batch task's outcome in the batch's summary line (`tasks`, by `taskHash` of the task id):
 * compact, so a batch of 20 fits the driver's 4 KiB termination message — the error's message
 * and the figures may have been dropped to fit (jobs/spark `fit_summary`), never the exit code.
 * The figures are arrays in the order of jobs/spark `OUTCOME_COMMITS` and `OUTCOME_MEMORY`.
 */
const batchTaskOutcome = z.looseObject({
  exitCode: z.int(),
  durationMs: figure(z.int()),
  cpuSeconds: figure(z.number().min(0)),
  /** bytesRead, bytesWritten, filesRewritten, dataFilesRemoved, deleteFilesRemoved. */
  commits: figure(z.tuple([count, count, count, count, count])),
  /** The table's snapshots when the job loaded it and after its commit. */
  snapshots: figure(z.tuple([count, count])),
  /** peakHeapBytes, cores[, heapBytes]. */
  memory: figure(
    z.union([z.tuple([count, z.int().min(1)]), z.tuple([count, z.int().min(1), count])]),
  ),
  error: taskError.partial({ message: true }).optional(),
});
export type BatchTaskOutcome = z.output<typeof batchTaskOutcome>;

/**
 * What the dispatcher records of a succeeded run — its ledger entry and succeeded event, its
 * learned-sizing sample, a batch task's own end — in one shape whichever way it was read: from
 * the job's full result (`resultFigures`: the local runner, a single operator run) or from a
 * batch task's compact outcome (`outcomeFigures`: the operator runner), so both runners record
 * the same run the same.
 */
export interface RunFigures {
  readonly durationMs?: number;
  readonly cpuSeconds?: number;
  readonly commits?: NonNullable<JobResult['commits']>;
  readonly memory?: NonNullable<JobResult['memory']>;
  /** The table's snapshots when the job loaded it and after its commit. */
  readonly snapshots?: { readonly before: number; readonly after: number };
  /** Held idle before the task started, in a resident session (ADR 0045): compute, no work. */
  readonly idleMs?: number;
}

/** A full result's figures. */
export function resultFigures(result: JobResult): RunFigures {
  return {
    durationMs: result.durationMs,
    ...(result.cpuSeconds === undefined ? {} : { cpuSeconds: result.cpuSeconds }),
    ...(result.commits === undefined ? {} : { commits: result.commits }),
    ...(result.memory === undefined ? {} : { memory: result.memory }),
    ...(result.idleMs === undefined ? {} : { idleMs: result.idleMs }),
    snapshots: { before: result.before.snapshots, after: result.after.snapshots },
  };
}

/** A batch task's outcome's figures: those it still holds after `fit_summary`. */
export function outcomeFigures(outcome: BatchTaskOutcome): RunFigures {
  const { durationMs, cpuSeconds, commits, snapshots, memory } = outcome;
  return {
    ...(durationMs === undefined ? {} : { durationMs }),
    ...(cpuSeconds === undefined ? {} : { cpuSeconds }),
    ...(commits === undefined
      ? {}
      : {
          commits: {
            bytesRead: commits[0],
            bytesWritten: commits[1],
            filesRewritten: commits[2],
            dataFilesRemoved: commits[3],
            deleteFilesRemoved: commits[4],
          },
        }),
    ...(memory === undefined
      ? {}
      : {
          memory: {
            peakHeapBytes: memory[0],
            cores: memory[1],
            ...(memory[2] === undefined ? {} : { heapBytes: memory[2] }),
          },
        }),
    ...(snapshots === undefined
      ? {}
      : { snapshots: { before: snapshots[0], after: snapshots[1] } }),
  };
}

/** The batch's summary line (`--tasks`/`--tasks-json`, docs/spark-job.md#batches). */
export const batchSummarySchema = z.looseObject({
  batch: z.int(),
  exitCode: z.int(),
  error: taskError.optional(),
  tasks: z.record(z.string(), batchTaskOutcome).optional(),
});
export type BatchSummary = z.output<typeof batchSummarySchema>;

/** The batch summary in `text` (a termination message), or undefined. */
export function parseBatchSummary(text: string): BatchSummary | undefined {
  try {
    const parsed = batchSummarySchema.safeParse(JSON.parse(text.trim()));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The last line of `text` that is a job result, or undefined. */
export function parseJobOutput(text: string): JobOutput | undefined {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('{'));
  for (const line of lines.reverse()) {
    try {
      const parsed = jobResultSchema.safeParse(JSON.parse(line));
      if (parsed.success) return parsed.data;
    } catch {
      // Not JSON: Spark printed something else on stdout.
    }
  }
  return undefined;
}

/** An error for a run that ended without a result line (killed, OOM, vanished). */
export function errorWithoutResult(kind: string, message: string, retryable: boolean): TaskError {
  return { kind, message, retryable };
}

/** Error kind from an exit code, when only the code is known. */
export function errorFromExitCode(code: number, message: string): TaskError {
  switch (code) {
    case JobExitCode.badInput:
      return { kind: 'bad-input', message, retryable: false };
    case JobExitCode.tableNotFound:
      return { kind: 'table-not-found', message, retryable: false };
    case JobExitCode.commitConflict:
      return { kind: 'commit-conflict', message, retryable: true };
    case JobExitCode.transientIo:
      return { kind: 'io', message, retryable: true };
    case JobExitCode.refused:
      return { kind: 'refused', message, retryable: false };
    // 137 = killed by SIGKILL: on Kubernetes the kernel's OOM killer (the pod's memory limit).
    case JobExitCode.outOfMemory:
    case 137:
      return { kind: OUT_OF_MEMORY_KIND, message, retryable: true };
    default:
      return { kind: 'failed', message, retryable: false };
  }
}
