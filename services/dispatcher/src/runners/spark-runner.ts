import type { Binding, CatalogAuth, RunLocation, Task, TaskError } from '@icepack/types';
import type { JobSize } from '../domain/sizing.ts';
import { resultFigures, type JobResult, type RunFigures } from './job-result.ts';

/** How the job reaches the catalog. Secrets never travel here: only env var names. */
export interface CatalogConnection {
  /** Spark catalog name (the task's `table.catalog`). */
  readonly name: string;
  /** REST catalog URI. */
  readonly uri: string;
  readonly warehouse?: string;
  /** The catalog's auth, secret references only (the spark-operator runner maps them). */
  readonly auth?: CatalogAuth;
  /** The catalog's non-secret client properties. */
  readonly properties?: Readonly<Record<string, string>>;
  /** Environment variables the job reads secrets from, passed through by name only. */
  readonly secretEnv?: readonly string[];
}

export interface RunRequest {
  /**
   * The enqueued job this run belongs to (`<task id>@<job timestamp>`): task ids repeat for
   * every task of a type on a table, so a later task under the same id is a new task run,
   * never mistaken for an old one.
   */
  readonly taskRun: string;
  readonly task: Task;
  /** 1 for the first run; a run is identified by (task run, attempt). */
  readonly attempt: number;
  readonly binding: Binding;
  readonly size: JobSize;
  readonly catalog: CatalogConnection;
  /** W3C traceparent for the job (annotation + env var). */
  readonly traceparent?: string;
  /** Cancel the run after this long. */
  readonly timeoutMs: number;
  /** Called once the run is launched or found launched (dispatch-latency metric). */
  readonly onSubmitted?: () => void;
}

/** One task of a batch: its task run (BullMQ job) and the task. */
export interface BatchTask {
  readonly taskRun: string;
  readonly task: Task;
}

/**
 * Several small tasks of one catalog in one Spark application (docs/dispatcher.md#batches):
 * one after another, each with its own commit and result. Identified by (batch run, attempt)
 * as a run is by (task run, attempt); the task list of an attempt never changes.
 */
export interface BatchRunRequest extends Omit<RunRequest, 'taskRun' | 'task'> {
  /** The batch's id, stable across restarts (the leader job's task run). */
  readonly batchRun: string;
  readonly tasks: readonly BatchTask[];
  /**
   * A resident session (ADR 0045, local runner only): a batch launched by this call keeps its
   * session up for task lists appended to its inbox (`appendToBatch`). Ignored when the batch
   * was launched before (a re-attach follows it as it was launched).
   */
  readonly resident?: ResidentBatch;
}

/** What a resident session's launcher does while the application lives (ADR 0045). */
export interface ResidentBatch {
  /** The job closes its inbox after finding nothing in it for this long. */
  readonly idleSeconds: number;
  /** … or once it took this many tasks (its own list's included). */
  readonly maxTasks: number;
  /**
   * … or at this time (epoch ms) at the latest, before the runner's kill at the task timeout
   * (ADR 0046, `sessionCloseBy`): what it took by then still runs.
   */
  readonly closeBy: number;
  /**
   * Called at each look at the live application: appends further tasks (`appendToBatch`)
   * and returns those it appended, whose ends the runner then reports too.
   */
  readonly onPoll: () => Promise<readonly BatchTask[]>;
  /** A task's end, as soon as its result is there (before the application exits). */
  readonly onEnd: (taskRun: string, end: RunEnd) => Promise<void>;
}

/** What names a batch run. */
export type BatchRunKey = Pick<BatchRunRequest, 'batchRun' | 'attempt'>;

/** Each task's end by its task run; `reattached` as for a run. */
export interface BatchOutcome {
  readonly reattached: boolean;
  readonly ends: ReadonlyMap<string, RunEnd>;
  /**
   * A resident session's idle time after its last task, until it closed its inbox (ms): held
   * compute of no task's own, reported as its own ledger entry under the batch's leader's task
   * and run (`ResidentSessionEnded`, ADR 0046).
   */
  readonly idleMs?: number;
}

/** How a run ended. */
export type RunEnd =
  /**
   * `result`: the job's result line, when the runner can read it (local runner, a single
   * operator run). `figures`: a batch task's figures when only its compact outcome is known
   * (spark-operator runner). Read either through `endFigures`.
   */
  | { readonly ok: true; readonly result?: JobResult; readonly figures?: RunFigures }
  | { readonly ok: false; readonly error: TaskError };

/**
 * A succeeded run's figures, however its runner read them (the full result or a batch task's
 * outcome): what its ledger entry, sizing sample and own end are recorded from. Undefined for
 * a failure or a success whose result could not be read.
 */
export function endFigures(end: RunEnd): RunFigures | undefined {
  if (!end.ok) return undefined;
  return end.result === undefined ? end.figures : resultFigures(end.result);
}

/** `reattached`: this call followed a run launched earlier instead of launching one. */
export type RunOutcome = RunEnd & { readonly reattached: boolean };

/** What names a run: the task run and the attempt. */
export type RunKey = Pick<RunRequest, 'taskRun' | 'attempt' | 'task'>;

/**
 * Runs one task attempt to its end. Idempotent per (task run, attempt): calling `run` again
 * for an attempt that was launched before (by this or a crashed process) follows that run
 * instead of starting a second one.
 */
export interface SparkRunner {
  readonly kind: string;
  run(request: RunRequest): Promise<RunOutcome>;
  /** Was this attempt launched already (by any dispatcher)? Such a run skips the quota check. */
  isLaunched(request: RunKey & Pick<RunRequest, 'binding'>): Promise<boolean>;
  /**
   * The run's name on this runner (SparkApplication name, run directory): the task events'
   * `runId`. Deterministic per (task run, attempt), so a re-attach reports the same id.
   */
  runName(key: RunKey): string;
  /**
   * Where the attempt's run is and where its logs are (the console's queue page): recorded on
   * the job when the attempt starts. Optional: a runner without it records nothing.
   */
  location?(request: RunKey & Pick<RunRequest, 'binding'>): RunLocation;
  /**
   * Runs a batch to its end, idempotent per (batch run, attempt) like `run`: a second call
   * follows the batch launched before, and a task with a result is never run again. A task
   * the batch left without a result (the application died) ends `lost`, retryable.
   * Optional: a runner without it runs every task alone.
   */
  runBatch?(request: BatchRunRequest): Promise<BatchOutcome>;
  /**
   * The batch's name on this runner, deterministic per (batch run, attempt): the `runId` of
   * its tasks' events. Given with `runBatch`.
   */
  batchName?(key: BatchRunKey): string;
  /**
   * Where the batch runs and where its logs are, as `location` for a run: recorded on each of
   * its tasks' jobs (the console's queue page). Optional.
   */
  batchLocation?(key: BatchRunKey & Pick<RunRequest, 'binding'>): RunLocation;
  /**
   * Appends tasks to a live resident session's inbox (ADR 0045): true when the application
   * accepted them (it runs them, each reported by its result), false when its inbox is closed
   * or was never opened (they are not its: launch them otherwise). Only runners whose job can
   * read what the dispatcher writes have it — the local runner; the spark-operator runner runs
   * one application per batch.
   */
  appendToBatch?(key: BatchRunKey, tasks: readonly BatchTask[]): Promise<boolean>;
}
