import { setTimeout as sleep } from 'node:timers/promises';
import { DelayedError, Job, Queue, RateLimitError, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { Attr, injectTraceparent, inSpan, type Logger } from '@icepack/runtime';
import {
  BULLMQ_PREFIX,
  JOB_RUN_LOCATION_FIELD,
  parseTask,
  queueNameForCatalog,
  tableKey,
  type Binding,
  type HealthFigures,
  type Task,
  type TaskError,
  type TaskEvent,
  type TaskStatus,
} from '@icepack/types';
import { batchable, DEFAULT_BATCH_LIMITS, selectBatch, type BatchLimits } from '../domain/batch.ts';
import { concurrencyOf, Lane, LARGE_SLOTS_BUSY, laneOf } from '../domain/lanes.ts';
import type { LaunchGate, LaunchPermit } from '../domain/launch-gate.ts';
import { runSample } from '../domain/learned-sizing.ts';
import { ledgerEntry, sessionTailCost, type JobLedgerFigures } from '../domain/ledger.ts';
import {
  appendRoom,
  leaderReportedAtResult,
  residentOn,
  selectAppend,
  sessionCloseBy,
  sessionReserveMs,
  timeRoom,
  type LiveSession,
  type ResidentSettings,
} from '../domain/resident-session.ts';
import { NO_GROWTH, resourceStep, type Growth } from '../domain/resource-failure.ts';
import { afterFailedRun, afterRunnerError, afterUnknownRun } from '../domain/retry.ts';
import { waitIsNews, waitMark, WaitKind } from '../domain/waits.ts';
import {
  minFileSizeOf,
  minInputFilesOf,
  sizeJob,
  type JobSize,
  type QuotaRoom,
  type SizingDecision,
  type SizingOptions,
} from '../domain/sizing.ts';
import { errorWithoutResult } from '../runners/job-result.ts';
import {
  endFigures,
  type BatchRunKey,
  type BatchTask,
  type CatalogConnection,
  type ResidentBatch,
  type RunEnd,
  type SparkRunner,
} from '../runners/spark-runner.ts';
import { BatchClaims } from './batch-claims.ts';
import { GatedWorker } from './gated-worker.ts';
import { RedisLargeSlots, type LargeSlotGate } from './large-slots.ts';
import { RENEW_CLAIM_MS, type QuotaGate } from './quota.ts';
import type { SizingModelSource } from './sizing-store.ts';
import type { TableHealthReader } from './table-health.ts';
import type { DispatchSink } from './task-events.ts';

export interface TaskWorkerOptions {
  readonly binding: Binding;
  /** A worker-role connection (`maxRetriesPerRequest: null`). */
  readonly connection: Redis;
  readonly runner: SparkRunner;
  readonly quota: QuotaGate;
  /**
   * The catalog's large-task slots (ADR 0029). Default: leased claims in Redis on
   * `connection`, shared by every dispatcher.
   */
  readonly largeSlots?: LargeSlotGate;
  /** How often a running task's quota claim and large-task slot are renewed. Default 60 s. */
  readonly claimRenewMs?: number;
  readonly sink: DispatchSink;
  readonly health: TableHealthReader;
  readonly catalog: CatalogConnection;
  readonly logger: Logger;
  /** BullMQ key prefix. Default `BULLMQ_PREFIX`. */
  readonly prefix?: string;
  /** Runs of a task (first + retries after retryable failures). Default 3. */
  readonly maxAttempts?: number;
  /**
   * Backoff before retry n: `backoffMs × 2^(n−1)`. Default 30 s. A run whose state is unknown
   * (runner error) is followed again after the same backoff, at most 5 min (or `backoffMs`).
   */
  readonly backoffMs?: number;
  /** How long a task waits for quota before it looks again. Default 15 s. */
  readonly quotaWaitMs?: number;
  /** A run is cancelled after this long. Default 6 h. */
  readonly timeoutMs?: number;
  /**
   * BullMQ job lock; renewed every half of it while the run is followed. A crashed
   * dispatcher's job is recovered after about this long. Default 60 s.
   */
  readonly lockDurationMs?: number;
  /**
   * Stalls tolerated before BullMQ fails the job. A stall means a dispatcher died while
   * following a run; the next one re-attaches to that run, so stalls are harmless. Default 50.
   */
  readonly maxStalledCount?: number;
  readonly sizing?: SizingOptions;
  /**
   * Learned sizing (ADR 0026): jobs are sized with its current options instead of `sizing`,
   * and each run's measurements are recorded to it when the run's end is known. Default none.
   */
  readonly sizingModel?: SizingModelSource;
  /** Told the time from dequeue (BullMQ `processedOn`) to the run being submitted. */
  readonly onDispatched?: (latencyMs: number, task: Task) => void;
  /**
   * Told each time a task goes back to wait (for quota or a large-task slot), every re-check
   * included: only the start of a wait is a task event (ADR 0041).
   */
  readonly onWait?: (kind: WaitKind, task: Task) => void;
  /**
   * Batched runs (ADR 0027): a small task taken from the queue takes further small waiting
   * tasks of it into one Spark application, within these bounds. Default none: every task
   * runs alone. Needs a runner with `runBatch`; without one every task runs alone.
   */
  readonly batch?: BatchLimits;
  /**
   * A resident session (ADR 0045): a batch application stays up for further small tasks of
   * its catalog, appended while it lives. Default none (off). Needs `batch` and a runner with
   * `appendToBatch` (the local runner); the spark-operator runner runs one application per
   * batch whatever this says.
   */
  readonly resident?: ResidentSettings;
  /**
   * The process's launch gate (ADR 0040), shared by all its catalog workers: a task is taken
   * off the queue only with a permit, held until its run is submitted or its processing
   * ends. Default none: the worker takes tasks up to its slots.
   */
  readonly launchGate?: LaunchGate;
}

/** Fields the dispatcher keeps in the BullMQ job hash (deleted with the job). */
const Field = {
  attempt: 'icepack:attempt',
  /** Figures of the table when the attempt in `started` started (written with it). */
  before: 'icepack:before',
  started: 'icepack:started',
  /** When the attempt in `started` started (ms). */
  startedAt: 'icepack:started-at',
  /** `{attempt, runId, end}`: how that attempt's run ended, recorded before it is reported. */
  ended: 'icepack:ended',
  /** `Growth` of the attempt in `attempt` after runs out of memory or time (ADR 0026). */
  grow: 'icepack:grow',
  /** Runner errors in a row (run state unknown), for the attempt in `attempt`. */
  runnerErrors: 'icepack:runner-errors',
  /** Where the attempt in `started` runs and where its logs are (the console reads it). */
  run: JOB_RUN_LOCATION_FIELD,
  /**
   * `BatchRef`: the attempt in `started` runs in that batch (written with `started`, before
   * the batch is launched). A job processed again finds its run there, never launches alone.
   */
  batch: 'icepack:batch',
  /**
   * The attempt that went back to `delayed` only because the catalog had no room: a batch
   * leader may take it (batch-claims.ts); a retry's back-off is a new attempt, never taken.
   */
  quotaWait: 'icepack:quota-wait',
  /**
   * `waitMark` of the wait last told with an `updated` event (ADR 0041): a re-check that finds
   * the task still waiting for the same is not told again. Emptied when the dispatcher puts
   * the task back for another reason (a runner error), so the wait after it is told.
   */
  waitTold: 'icepack:wait-told',
} as const;

/** The batch a job's attempt runs in: the batch run's key and the job's own attempt. */
interface BatchRef extends BatchRunKey {
  /** The job's attempt (`Field.attempt`) this batch runs; another attempt runs anew. */
  readonly taskAttempt: number;
}

/** What a batch reports for a task it has no end of: lost, retried like a killed run. */
const NO_BATCH_END: RunEnd = {
  ok: false,
  error: errorWithoutResult('lost', 'the batch reported no end for this task', true),
};

/**
 * When a task that ran in a batch ended, for its ledger cost and its sizing sample: its own
 * `durationMs` after its start (the session's start is in the first task's), not the batch's
 * end, which would charge every task the whole batch.
 */
function ownEndedAt(startedAt: number, end: RunEnd, now: number): number {
  const own = endFigures(end)?.durationMs;
  return own === undefined ? now : startedAt + own;
}

interface Ended {
  readonly attempt: number;
  /** The run's id as it was reported (the runner may differ after a restart). */
  readonly runId: string;
  readonly end: RunEnd;
  /** When the end was known (ms) and the cores the run was sized for: its ledger cost. */
  readonly endedAt?: number;
  readonly cores?: number;
  /**
   * A resident session's idle time after its last task, when this run led it, and when its
   * application exited (ms): the session's tail, reported as its own ledger entry (ADR 0046).
   */
  readonly idleMs?: number;
  readonly exitedAt?: number;
}

/** The recorded end of `attempt`'s run, if that run ended. */
function endOf(recorded: string | null | undefined, attempt: number): Ended | undefined {
  if (typeof recorded !== 'string') return undefined;
  const ended = JSON.parse(recorded) as Ended;
  return ended.attempt === attempt ? ended : undefined;
}

/** One processing of a job: the task's attempt and the run it names. */
interface Run {
  readonly job: Job;
  readonly token: string | undefined;
  readonly task: Task;
  /** `<task id>@<job timestamp>`: this enqueued job of the task. */
  readonly taskRun: string;
  readonly attempt: number;
  /** The runner's name of (task run, attempt), or of its batch: the events' `runId`. */
  runId: string;
  /** How much larger than sized this attempt runs (after out-of-memory or time-out). */
  readonly grow: Growth;
  /**
   * The launch gate's permit this processing holds (ADR 0040); given back at submission, or
   * before a back-off. A retry that may launch again takes a new one (`#relaunchPermit`).
   */
  permit?: LaunchPermit | undefined;
}

/** What is known of the attempt's run while it is being dispatched. */
interface Progress {
  /** `started` is recorded for this attempt: its run may have been launched. */
  started: boolean;
  /** When the attempt started (ms). */
  startedAt: number;
  /** The table's figures when this attempt's run started. */
  before: HealthFigures | undefined;
  /** The quota claim taken for the run, held until its end is known. */
  claimed: boolean;
  /** A large task's slot (ADR 0029), held like the quota claim. */
  largeSlot: boolean;
  /** Cores the run was sized for (driver + executors), once sized. */
  cores: number | undefined;
  /** The size the run was launched (or followed) with, once sized. */
  size?: JobSize;
  /** The batch this attempt runs in, once recorded (`Field.batch`). */
  batch?: BatchRef;
  /** The wait last told for the job (`Field.waitTold`), as read when its processing began. */
  waitTold?: string | null;
  /** The resident session's idle time after its last task, when this run led it (ADR 0045). */
  idleMs?: number;
  /**
   * The end of a resident session's leader, reported as its result appeared (ADR 0046), as
   * it was recorded: the job ends with it once the application exits, without reporting it
   * again (only the session's idle tail is reported then).
   */
  atResult?: Ended & { readonly endedAt: number };
}

/** A task held for a batch: its run, and when and from what figures it started. */
interface BatchMember {
  readonly run: Run;
  startedAt: number;
  before: HealthFigures | undefined;
  /** Its end was reported (a resident session reports each as its result appears). */
  ended?: boolean;
}

/** What a run's ledger cost is reckoned from. */
interface CostBasis {
  readonly startedAt: number;
  readonly endedAt: number;
  readonly cores: number;
}

/** The error by which a processing puts its task back to wait (BullMQ moves the job). */
function waitsAgain(error: unknown): boolean {
  return error instanceof DelayedError || error instanceof RateLimitError;
}

function coresOf(size: JobSize): number {
  return size.driver.cores + size.executor.cores * size.executor.instances;
}

/** The ledger's job figures: none without the snapshots (`fit_summary` drops them last). */
function jobFigures(end: RunEnd): JobLedgerFigures | undefined {
  const figures = endFigures(end);
  if (figures?.snapshots === undefined) return undefined;
  const { snapshots, commits, cpuSeconds } = figures;
  return {
    snapshotsBefore: snapshots.before,
    snapshotsAfter: snapshots.after,
    ...(commits === undefined ? {} : { commits }),
    ...(cpuSeconds === undefined ? {} : { cpuSeconds }),
  };
}

/**
 * One binding's dispatch: a BullMQ worker on the catalog's queue, at most `slots + smallSlots`
 * tasks at once across all dispatchers (global concurrency), of which at most `slots` large
 * ones (ADR 0029).
 */
export class TaskWorker {
  readonly queueName: string;
  readonly #o: Required<
    Omit<
      TaskWorkerOptions,
      'sizing' | 'onDispatched' | 'onWait' | 'sizingModel' | 'batch' | 'launchGate' | 'resident'
    >
  > &
    Pick<
      TaskWorkerOptions,
      'onDispatched' | 'onWait' | 'sizingModel' | 'batch' | 'launchGate' | 'resident'
    > & {
      sizing: SizingOptions;
    };
  readonly #queue: Queue;
  readonly #claims: BatchClaims;
  #worker: Worker | GatedWorker | undefined;

  constructor(options: TaskWorkerOptions) {
    this.#o = {
      prefix: BULLMQ_PREFIX,
      maxAttempts: 3,
      backoffMs: 30_000,
      quotaWaitMs: 15_000,
      timeoutMs: 6 * 3_600_000,
      lockDurationMs: 60_000,
      maxStalledCount: 50,
      sizing: {},
      largeSlots: new RedisLargeSlots({ redis: options.connection }),
      claimRenewMs: RENEW_CLAIM_MS,
      ...options,
    };
    this.queueName = queueNameForCatalog(options.binding.catalog);
    this.#queue = new Queue(this.queueName, {
      connection: options.connection,
      prefix: this.#o.prefix,
    });
    this.#claims = new BatchClaims(options.connection, this.#o.prefix, this.queueName);
  }

  async start(): Promise<void> {
    await this.#o.quota.open?.(this.#o.binding);
    // Both lanes: a large task that finds the `slots` taken waits (delayed), so the worker's
    // further `smallSlots` take the small tasks behind it.
    const concurrency = concurrencyOf(this.#o.binding);
    await this.#queue.setGlobalConcurrency(concurrency);
    const options = {
      connection: this.#o.connection,
      prefix: this.#o.prefix,
      concurrency,
      lockDuration: this.#o.lockDurationMs,
      stalledInterval: this.#o.lockDurationMs,
      maxStalledCount: this.#o.maxStalledCount,
    };
    const gate = this.#o.launchGate;
    const processor = (job: Job, token?: string): Promise<unknown> => this.#traced(job, token);
    this.#worker =
      gate === undefined
        ? new Worker(this.queueName, processor, options)
        : new GatedWorker(this.queueName, processor, options, gate);
    this.#worker.on('error', (error) =>
      this.#o.logger.warn({ err: error, queue: this.queueName }, 'worker error'),
    );
  }

  /** Stops taking tasks; waits for running ones unless `force`. */
  async close(force = false): Promise<void> {
    await this.#worker?.close(force);
    await this.#queue.close();
    await this.#o.quota.close?.();
  }

  #jobKey(job: Job): string {
    return `${this.#o.prefix}:${this.queueName}:${String(job.id)}`;
  }

  async #event(
    task: Task,
    status: TaskStatus,
    extra: Partial<
      Pick<
        TaskEvent,
        'reason' | 'before' | 'after' | 'error' | 'attempt' | 'runId' | 'cost' | 'benefit'
      >
    > = {},
  ): Promise<void> {
    try {
      await this.#o.sink.taskEvent({
        taskId: task.id,
        table: task.table,
        taskType: task.type,
        status,
        at: new Date().toISOString(),
        ...extra,
      });
    } catch (error) {
      // Events are the record, not the work: a Kafka hiccup must not fail or re-run a task.
      this.#o.logger.warn({ err: error, taskId: task.id, status }, 'task event not published');
    }
  }

  async #figures(task: Task): Promise<HealthFigures | undefined> {
    try {
      return await this.#o.health.read(task.table, minFileSizeOf(task));
    } catch (error) {
      this.#o.logger.warn({ err: error, taskId: task.id }, 'table figures not read');
      return undefined;
    }
  }

  /**
   * The dispatch continues the task's trace (its `traceparent`, set by the planner from the
   * scan), so the task events it publishes and the run it starts belong to that trace.
   */
  #traced(job: Job, token: string | undefined): Promise<unknown> {
    const data = job.data as { type?: unknown; traceparent?: unknown };
    return inSpan(
      `dispatch ${String(data.type)}`,
      {
        parent: typeof data.traceparent === 'string' ? { traceparent: data.traceparent } : {},
        attributes: { [Attr.icepackTaskId]: String(job.id), [Attr.icepackQueue]: this.queueName },
        // Waiting for quota or a retry backoff is not a failed dispatch.
        expected: (error) => waitsAgain(error),
      },
      () => this.#process(job, token),
    );
  }

  /**
   * A permit for the retry of a run whose state was unknown: its back-off gave the first one
   * back (a failing catalog must not hold the gate), but the retry re-attaches or launches
   * anew, and a launch holds a permit while it submits (ADR 0040). Released at submission or
   * when the job's processing ends, like the first; none without a gate.
   */
  async #relaunchPermit(run: Run): Promise<void> {
    if (run.permit === undefined || !(this.#worker instanceof GatedWorker)) return;
    if (run.token === undefined) return;
    run.permit = await this.#worker.relaunchPermit(run.token);
  }

  /**
   * Told that the run's application is submitted (or found submitted): the launch gate's
   * permit goes back (ADR 0040), the dispatch latency is recorded.
   */
  #submitted(run: Run): () => void {
    return () => {
      run.permit?.release();
      const { job, task } = run;
      this.#o.onDispatched?.(Date.now() - (job.processedOn ?? Date.now()), task);
    };
  }

  async #process(job: Job, token: string | undefined): Promise<unknown> {
    let task: Task;
    try {
      task = parseTask(job.data);
    } catch (error) {
      throw new UnrecoverableError(`invalid task: ${(error as Error).message}`);
    }
    const [
      attemptText,
      savedBefore,
      startedText,
      startedAtText,
      endedText,
      runnerErrorsText,
      growText,
      batchText,
      waitToldText,
    ] = await this.#o.connection.hmget(
      this.#jobKey(job),
      Field.attempt,
      Field.before,
      Field.started,
      Field.startedAt,
      Field.ended,
      Field.runnerErrors,
      Field.grow,
      Field.batch,
      Field.waitTold,
    );
    const attempt = Number(attemptText ?? '1');
    const taskRun = `${task.id}@${String(job.timestamp)}`;
    // The saved figures are those of the attempt in `started` (both are written together): a
    // new attempt reads the table again when its own run starts.
    const started = startedText === String(attempt);
    const recordedBatch =
      typeof batchText === 'string' ? (JSON.parse(batchText) as BatchRef) : undefined;
    const batch = started && recordedBatch?.taskAttempt === attempt ? recordedBatch : undefined;
    const runId =
      batch === undefined
        ? this.#o.runner.runName({ taskRun, attempt, task })
        : this.#batchName(batch);
    const grow = typeof growText === 'string' ? (JSON.parse(growText) as Growth) : NO_GROWTH;
    const permit =
      this.#worker instanceof GatedWorker ? this.#worker.launchPermit(token) : undefined;
    const run: Run = { job, token, task, taskRun, attempt, runId, grow, permit };
    const saved =
      started && typeof savedBefore === 'string'
        ? (JSON.parse(savedBefore) as HealthFigures)
        : undefined;

    // This attempt's run ended but its dispatcher died before the job was completed. Report
    // it (again: events are at-least-once) and never ask the runner: it may have forgotten the
    // run (an application deleted after its TTL, another runner) and would launch it anew.
    const ended = endOf(endedText, attempt);
    if (ended !== undefined) {
      this.#log(run).info('the run ended before a restart: reporting it, not running it again');
      const startedAt = Number(startedAtText ?? job.processedOn ?? Date.now());
      const cores = this.#coresOf(run, ended.cores);
      // The tail first: a failed run's report throws (the retry or the failure).
      await this.#reportTail({ ...run, runId: ended.runId }, ended, cores);
      return this.#report({ ...run, runId: ended.runId }, ended.end, saved, {
        startedAt,
        endedAt: ended.endedAt ?? Date.now(),
        cores,
      });
    }

    const progress: Progress = {
      started,
      startedAt: Number(startedAtText ?? job.processedOn ?? Date.now()),
      before: saved,
      claimed: false,
      largeSlot: false,
      cores: undefined,
      waitTold: waitToldText,
      ...(batch === undefined ? {} : { batch }),
    };
    let errors = Number(runnerErrorsText ?? '0');
    let end: RunEnd | undefined;
    const renewal = this.#renewClaim(run, progress);
    try {
      while (end === undefined) {
        try {
          end = await this.#launchAndFollow(run, progress);
        } catch (error) {
          if (waitsAgain(error)) throw error; // waiting for quota or a large-task slot
          if (progress.atResult !== undefined) {
            // Its end is reported: no retry or failure may follow it. The job ends with it;
            // the session's other jobs follow the application for themselves, as after a crash.
            this.#log(run).warn({ err: error }, 'resident session no longer followed');
            end = progress.atResult.end;
            continue;
          }
          errors += 1;
          // Nothing was launched: the task only waits again.
          if (!progress.started)
            return await this.#runnerError(run, error as Error, errors, progress);
          // Launched or maybe launched: the run may be going on. It stays active here — in the
          // queue (the planner leaves it alone), in the quota (its claim is kept) and for a
          // drain (the worker waits for it) — until its end is known.
          await this.#unknownRun(run, error as Error, errors, progress);
          // The next turn may launch again (the same name, if the run never got there): like
          // every launch, it holds a permit while it submits.
          await this.#relaunchPermit(run);
        }
      }
    } finally {
      clearInterval(renewal);
    }
    await this.#release(run, progress);
    if (progress.atResult !== undefined) {
      // A session's leader reported as its result appeared (ADR 0046): its job held the slot
      // and the claim until the application exited, and ends now. The rescan is asked for
      // now, once the job no longer runs: the planner plans no task of this table and type
      // while its job is active (same job id), and would otherwise wait for the next scan.
      // The session's idle tail is recorded on the job first, then reported: a dispatcher that
      // dies in between reports it again (events are at least once; the ledger keeps one).
      if (progress.idleMs !== undefined) {
        const record = { ...progress.atResult, idleMs: progress.idleMs, exitedAt: Date.now() };
        await this.#o.connection.hset(this.#jobKey(run.job), Field.ended, JSON.stringify(record));
        await this.#reportTail(run, record, this.#coresOf(run, record.cores));
      }
      await this.#rescan(run.task);
      return progress.atResult.end.ok ? progress.atResult.end.result : undefined;
    }
    const endedAt =
      progress.batch === undefined ? Date.now() : ownEndedAt(progress.startedAt, end, Date.now());
    const record = {
      attempt,
      runId: run.runId,
      end,
      endedAt,
      ...(progress.cores === undefined ? {} : { cores: progress.cores }),
      ...(progress.idleMs === undefined ? {} : { idleMs: progress.idleMs, exitedAt: Date.now() }),
    } satisfies Ended;
    await this.#recordEnd(run, record, progress);
    const cores = this.#coresOf(run, progress.cores);
    // The tail first: a failed run's report throws (the retry or the failure).
    await this.#reportTail(run, record, cores);
    return this.#report(run, end, progress.before, {
      startedAt: progress.startedAt,
      endedAt,
      cores,
    });
  }

  /**
   * A resident session's idle tail (ADR 0046), when the run led one that idled after its last
   * task: the session's cores × that time, as its own ledger entry under the leader's task and
   * run (`ResidentSessionEnded`). Not a step of the task: whatever the leader's outcome. Never
   * throws: events are the record, not the work.
   */
  async #reportTail(run: Run, ended: Ended, cores: number): Promise<void> {
    const { idleMs, exitedAt } = ended;
    if (idleMs === undefined || idleMs <= 0) return;
    const tail = {
      taskId: run.task.id,
      table: run.task.table,
      taskType: run.task.type,
      runId: run.runId,
      at: new Date(exitedAt ?? Date.now()).toISOString(),
      idleMs: Math.round(idleMs),
      cost: sessionTailCost(cores, idleMs),
    };
    this.#log(run).info(
      { idleMs: tail.idleMs, cost: tail.cost },
      'resident session ended after its idle',
    );
    try {
      await this.#o.sink.sessionTail?.(tail);
    } catch (error) {
      this.#o.logger.warn({ err: error, taskId: run.task.id }, 'session tail not published');
    }
  }

  /**
   * The cores the run was sized for: as recorded, else — a record of an older dispatcher, a
   * run whose sizing was not kept — as it would be sized without quota.
   */
  #coresOf(run: Run, recorded: number | undefined): number {
    return recorded ?? coresOf(this.#size(run.task, {}, run.grow).size);
  }

  #size(task: Task, room: QuotaRoom, grow: Growth): SizingDecision {
    return sizeJob(
      {
        bytes: task.state.bytesToRewrite,
        files: task.state.filesToRewrite,
        minInputFiles: minInputFilesOf(task),
        spark: this.#o.binding.spark,
        room,
        grow,
      },
      this.#o.sizingModel?.options() ?? this.#o.sizing,
    );
  }

  /**
   * A run's end recorded on its job first — a dispatcher that dies from here on reports it
   * again, never runs it — then its sizing sample.
   */
  async #recordEnd(
    run: Run,
    record: Ended & { readonly endedAt: number },
    sized: Pick<Progress, 'size' | 'startedAt'>,
  ): Promise<void> {
    await this.#o.connection.hset(this.#jobKey(run.job), Field.ended, JSON.stringify(record));
    await this.#recordSample(run, record.end, sized, record.endedAt);
  }

  /**
   * The run's measurements for the learned sizing: recorded once, when its end becomes known
   * here (a run reported again after a restart is not sampled twice).
   */
  async #recordSample(
    run: Run,
    end: RunEnd,
    progress: Pick<Progress, 'size' | 'startedAt'>,
    endedAt: number,
  ): Promise<void> {
    const model = this.#o.sizingModel;
    if (model === undefined || progress.size === undefined) return;
    const { size } = progress;
    const result = endFigures(end);
    const sample = runSample({
      estimate: { bytes: run.task.state.bytesToRewrite, files: run.task.state.filesToRewrite },
      ok: end.ok,
      ...(result?.commits === undefined ? {} : { commits: result.commits }),
      ...(result?.cpuSeconds === undefined ? {} : { cpuSeconds: result.cpuSeconds }),
      ...(end.ok ? {} : { errorKind: end.error.kind }),
      cores: coresOf(size),
      memoryBytes: size.request.memoryBytes,
      heapPerCoreBytes: size.executor.memoryBytes / size.executor.cores,
      ...(result?.memory === undefined ? {} : { memory: result.memory }),
      wallMs: endedAt - progress.startedAt,
      at: endedAt,
    });
    if (sample !== undefined) await model.record(sample);
  }

  #claimId(run: Run): string {
    return `${run.taskRun}#${String(run.attempt)}`;
  }

  /** Keeps the run's claims (quota, large-task slot) from lapsing while they are held. */
  #renewClaim(run: Run, progress: Progress): NodeJS.Timeout {
    const { quota, largeSlots, binding } = this.#o;
    const claimId = this.#claimId(run);
    const warn = (what: string) => (error: unknown) =>
      this.#log(run).warn({ err: error }, `${what} not renewed`);
    return setInterval(() => {
      if (progress.claimed && quota.renew !== undefined)
        quota.renew(binding, claimId).catch(warn('quota claim'));
      if (progress.largeSlot) largeSlots.renew(binding, claimId).catch(warn('large-task slot'));
    }, this.#o.claimRenewMs);
  }

  async #release(run: Run, progress: Progress): Promise<void> {
    if (progress.claimed) {
      await this.#o.quota.release(this.#o.binding, this.#claimId(run));
      progress.claimed = false;
    }
    if (progress.largeSlot) {
      await this.#o.largeSlots.release(this.#o.binding, this.#claimId(run));
      progress.largeSlot = false;
    }
  }

  /**
   * A large task takes one of the catalog's `slots` only, so its `smallSlots` stay free for
   * small tasks (ADR 0029). False when none is free. A run launched before a restart keeps
   * (or takes back) its slot whatever the count: it runs.
   */
  async #admitLarge(run: Run, progress: Progress, launched: boolean): Promise<boolean> {
    if (progress.largeSlot || laneOf(run.task) !== Lane.large) return true;
    const { largeSlots, binding } = this.#o;
    const claimId = this.#claimId(run);
    if (launched) await largeSlots.hold(binding, claimId);
    else if (!(await largeSlots.admit(binding, claimId))) return false;
    progress.largeSlot = true;
    return true;
  }

  /**
   * The task waits (not failed) and is tried again after `quotaWaitMs`. Only a wait's start is
   * told (`updated` with the reason, ADR 0041): the re-checks that find it still waiting are
   * logged at debug and counted (`onWait`).
   *
   * A wait for quota keeps the task's place (ADR 0053): it goes back to the queue where it
   * was (ahead of its priority) and this worker takes nothing of the catalog's queue until
   * `quotaWaitMs` has passed — the catalog is full, so nothing else would fit either, and a
   * task delayed instead would come back behind tasks planned after it. A wait for a
   * large-task slot is delayed instead: its worker slot takes the next, small tasks pass it
   * (ADR 0029).
   */
  async #waitAgain(run: Run, progress: Progress, kind: WaitKind, reason: string): Promise<never> {
    const news = waitIsNews(progress.waitTold, run.attempt, kind);
    if (news) this.#log(run).info({ reason }, 'waiting');
    else this.#log(run).debug({ reason }, 'still waiting');
    this.#o.onWait?.(kind, run.task);
    await this.#release(run, progress);
    if (news) await this.#event(run.task, 'updated', { runId: run.runId, reason });
    await this.#o.connection.hset(this.#jobKey(run.job), {
      [Field.quotaWait]: String(run.attempt),
      [Field.waitTold]: waitMark(run.attempt, kind),
    });
    if (kind === WaitKind.quota) {
      // The key BullMQ reads back when it returns the job to the queue; with no limiter
      // configured, only workers that meet a full quota wait on it.
      await this.#queue.rateLimit(this.#o.quotaWaitMs);
      throw new RateLimitError();
    }
    await run.job.moveToDelayed(Date.now() + this.#o.quotaWaitMs, run.token);
    throw new DelayedError();
  }

  /**
   * A logger bound to the run, made when there is something to log: a pino child per task
   * (with the runtime's redaction) was the largest allocation of the dispatch path.
   */
  #log(run: Run): Logger {
    return this.#o.logger.child({
      taskId: run.task.id,
      runId: run.runId,
      attempt: run.attempt,
      queue: this.queueName,
    });
  }

  /**
   * Launches the attempt's run — or finds it launched — after the quota check, and follows it
   * to its end. Throws (`RateLimitError` or `DelayedError`) when the task must wait for quota or a slot. Sets
   * `progress.started` once the attempt is recorded as started, `progress.claimed` while it
   * holds a quota claim (released by the caller once the run's end is known).
   */
  async #launchAndFollow(run: Run, progress: Progress): Promise<RunEnd> {
    if (progress.batch !== undefined) return this.#followBatch(run, progress, progress.batch);
    const { job, task, taskRun, attempt, runId } = run;
    const { binding, runner } = this.#o;
    // `started` is recorded before every launch: without it this attempt never launched, and
    // the runner need not be asked (one API call less on the hot path).
    const launched =
      progress.started && (await runner.isLaunched({ taskRun, attempt, binding, task }));
    if (!progress.claimed && !(await this.#admitLarge(run, progress, launched)))
      return this.#waitAgain(run, progress, WaitKind.largeSlot, LARGE_SLOTS_BUSY);
    const room = launched ? {} : await this.#o.quota.room(binding);
    // A fresh small attempt may take further waiting small tasks with it (ADR 0027); the
    // batch is sized as its largest task would be, and claims quota once.
    const fresh = !launched && !progress.started && !progress.claimed;
    const candidates = fresh ? await this.#batchCandidates(run) : [];
    const decision = this.#size(largestOf(task, candidates), room, run.grow);
    const claimId = this.#claimId(run);
    if (
      !launched &&
      !progress.claimed &&
      (!decision.fits || !(await this.#o.quota.acquire(binding, claimId, decision.size.request)))
    ) {
      const reason = decision.fits ? 'quota claimed by another task' : decision.reason;
      return this.#waitAgain(run, progress, WaitKind.quota, `waiting for quota: ${reason}`);
    }

    // Ours now — or, for a run launched before a restart, the claim its dispatcher made (if
    // its lease has not lapsed): renewed and released from here on.
    progress.claimed = true;
    progress.cores = coresOf(decision.size);
    progress.size = decision.size;
    // A resident session (ADR 0045) starts from a lone small task too: the others come later.
    const resident = fresh ? this.#residentFor(run) : undefined;
    if (candidates.length > 0 || resident !== undefined) {
      const end = await this.#runBatch(run, progress, candidates, decision.size, resident);
      if (end !== undefined) return end;
      // None of them could be held any more: the task runs alone, as sized.
    }
    if (!progress.started) {
      // The table as this attempt's run starts from (a retry reads it again).
      const before = await this.#figures(task);
      const startedAt = Date.now();
      await this.#event(task, 'started', { attempt, runId, ...(before ? { before } : {}) });
      const location = runner.location?.({ taskRun, attempt, task, binding });
      await this.#o.connection.hset(this.#jobKey(job), {
        [Field.started]: String(attempt),
        [Field.startedAt]: String(startedAt),
        ...(before ? { [Field.before]: JSON.stringify(before) } : {}),
        ...(location ? { [Field.run]: JSON.stringify(location) } : {}),
      });
      Object.assign(progress, { started: true, startedAt, before });
    }
    const { reattached, ...end } = await runner.run({
      taskRun,
      task,
      attempt,
      binding,
      size: decision.size,
      catalog: this.#o.catalog,
      timeoutMs: this.#o.timeoutMs,
      onSubmitted: this.#submitted(run),
      // The dispatch span's context (the task's own when nothing is exported): the job's
      // span is a child of this dispatch.
      ...traceparentOf(task),
    });
    if (reattached) this.#log(run).info('followed an existing run (no second launch)');
    return end;
  }

  #batchName(key: BatchRunKey): string {
    const { runner } = this.#o;
    if (runner.batchName === undefined) throw new Error(`runner ${runner.kind} runs no batches`);
    return runner.batchName(key);
  }

  /**
   * The waiting tasks the run's task would take into a batch (ADR 0027): none when batching
   * is off, the runner runs no batches or the task is not small; else `selectBatch` over the
   * queue's first waiting jobs (those that started an attempt before are followed by their
   * own processing, never batched anew). Not yet held: `#runBatch` claims them.
   */
  async #batchCandidates(run: Run): Promise<{ id: string; task: Task }[]> {
    const { batch: limits, runner } = this.#o;
    if (limits === undefined || runner.runBatch === undefined || runner.batchName === undefined)
      return [];
    if (run.token === undefined || !batchable(run.task, limits)) return [];
    const maxTasks = limits.maxTasks ?? DEFAULT_BATCH_LIMITS.maxTasks;
    if (maxTasks < 2) return [];
    // A few more than the bound: some are passed over (large, same table, too long).
    const waiting = await this.#claims.peek(Math.min(100, maxTasks * 3));
    const idOf = new Map<Task, string>();
    for (const job of waiting) {
      if (job.started || job.id === String(run.job.id)) continue;
      try {
        idOf.set(parseTask(JSON.parse(job.data)), job.id);
      } catch {
        // Invalid data fails in its own processing, with the reason; not batched.
      }
    }
    return selectBatch(run.task, [...idOf.keys()], limits)
      .slice(1)
      .map((task) => ({ id: idOf.get(task) ?? '', task }));
  }

  /**
   * Holds the candidates that still wait (active, locked with the run's token), records
   * `started` and the batch in every task's job (the run's too) before the launch, runs the
   * batch and ends each held job by its own task's end. Returns the run's own task's end;
   * undefined when no candidate could be held (the run goes on alone, nothing recorded).
   */
  async #runBatch(
    run: Run,
    progress: Progress,
    candidates: readonly { id: string; task: Task }[],
    size: JobSize,
    settings: ResidentSettings | undefined,
  ): Promise<RunEnd | undefined> {
    const token = run.token ?? '';
    const lockMs = this.#o.lockDurationMs;
    const held = await this.#claims.claim(
      candidates.map((c) => c.id),
      token,
      lockMs,
    );
    const members: BatchMember[] = [];
    for (const id of held) {
      const member = await this.#heldRun(id, token);
      if (member !== undefined) members.push({ run: member, startedAt: 0, before: undefined });
    }
    if (members.length === 0 && settings === undefined) return undefined;
    const ref: BatchRef = { batchRun: run.taskRun, attempt: run.attempt, taskAttempt: run.attempt };
    const batchId = this.#batchName(ref);
    run.runId = batchId;
    // Held locks are renewed as BullMQ renews the leader's; a crash lets them lapse, and the
    // stall check returns the jobs to the queue, where each follows this batch for itself.
    const renewal = setInterval(() => {
      for (const m of members)
        if (m.ended !== true)
          m.run.job
            .extendLock(token, lockMs)
            .catch((error: unknown) =>
              this.#log(m.run).warn({ err: error }, 'held job lock not renewed'),
            );
    }, lockMs / 2);
    try {
      for (const m of members) {
        m.run.runId = batchId;
        const recorded = await this.#recordStarted(m.run, { ...ref, taskAttempt: m.run.attempt });
        Object.assign(m, recorded);
      }
      Object.assign(progress, await this.#recordStarted(run, ref), { batch: ref });
      this.#log(run).info({ tasks: members.length + 1 }, 'batch starts');
      // Its time counts from here, a little before the launch: the runner's kill comes later.
      const resident =
        settings === undefined
          ? undefined
          : this.#residentBatch(run, ref, members, size, settings, lockMs, Date.now(), (end) =>
              this.#reportLeaderAtResult(run, progress, end),
            );
      const { reattached, ends, idleMs } = await this.#batchRunner().runBatch({
        batchRun: ref.batchRun,
        attempt: ref.attempt,
        tasks: [run, ...members.map((m) => m.run)].map(({ taskRun, task }) => ({ taskRun, task })),
        binding: this.#o.binding,
        size,
        catalog: this.#o.catalog,
        timeoutMs: this.#o.timeoutMs,
        onSubmitted: this.#submitted(run),
        ...traceparentOf(run.task),
        ...(resident === undefined ? {} : { resident }),
      });
      if (reattached) this.#log(run).info('followed an existing batch (no second launch)');
      clearInterval(renewal);
      // A resident session reported most as their results appeared; the rest end here.
      for (const m of members)
        if (m.ended !== true) await this.#endMember(m, ends.get(m.run.taskRun), size);
      // The session's idle tail is held compute of no task's own: reported under the leader's
      // task and run as its own ledger entry, once its end is (`#reportTail`, ADR 0046).
      if (idleMs !== undefined && idleMs > 0) progress.idleMs = idleMs;
      return ends.get(run.taskRun) ?? NO_BATCH_END;
    } finally {
      // On an error the held jobs are left to lapse: each then follows the batch for itself.
      clearInterval(renewal);
    }
  }

  /**
   * The resident-session settings for a batch this run would lead (ADR 0045), or undefined:
   * off, batching off, a runner that cannot append (the spark-operator runner: one application
   * per batch), a job without a lock token, or a task that is not small.
   */
  #residentFor(run: Run): ResidentSettings | undefined {
    const { resident, batch: limits, runner } = this.#o;
    if (!residentOn(resident) || limits === undefined) return undefined;
    if (runner.appendToBatch === undefined || runner.runBatch === undefined) return undefined;
    if (run.token === undefined || !batchable(run.task, limits)) return undefined;
    return resident;
  }

  /**
   * What the leader of a resident session does while its application lives (ADR 0045): at each
   * look, claims further small waiting tasks of the catalog (`selectAppend`) and appends them —
   * each held job's batch recorded FIRST (`started`, `icepack:batch`: a dispatcher that dies
   * from here on is followed by each job for itself), THEN renamed into the inbox; a closed
   * inbox undoes the record and puts the jobs back to wait. Only what the session can still
   * finish before its close time (`timeRoom`, ADR 0046: the runner kills it at the timeout);
   * the job closes its inbox by then too. Each member's end is reported as its result appears,
   * and so is the leader's when it succeeded (`onLeaderEnd`, ADR 0046).
   * Never throws: a failed look is logged, and the next one tries again.
   */
  #residentBatch(
    leader: Run,
    ref: BatchRef,
    members: BatchMember[],
    size: JobSize,
    settings: ResidentSettings,
    lockMs: number,
    launchedAt: number,
    onLeaderEnd: (end: RunEnd) => Promise<void>,
  ): ResidentBatch {
    const byTaskRun = new Map<string, BatchMember>(members.map((m) => [m.run.taskRun, m]));
    const tableOf = new Map<string, string>(
      [leader, ...members.map((m) => m.run)].map((r) => [r.taskRun, tableKey(r.task.table)]),
    );
    const busy = new Set(tableOf.values());
    let taken = tableOf.size;
    const { timeoutMs } = this.#o;
    const closeBy = sessionCloseBy(launchedAt, timeoutMs);
    const reserveMs = sessionReserveMs(timeoutMs);
    let longestTaskMs = 0;
    let lastEndAt = launchedAt;
    return {
      idleSeconds: settings.idleSeconds,
      maxTasks: settings.maxTasks,
      closeBy,
      onPoll: async () => {
        try {
          const now = Date.now();
          const session: LiveSession = {
            catalog: leader.task.table.catalog,
            taken,
            maxTasks: settings.maxTasks,
            busyTables: busy,
            timeRoom: timeRoom(
              { closeBy, reserveMs, longestTaskMs, lastEndAt, pending: busy.size },
              now,
            ),
          };
          const appended = await this.#append(leader, ref, session, lockMs);
          for (const m of appended) {
            members.push(m);
            byTaskRun.set(m.run.taskRun, m);
            tableOf.set(m.run.taskRun, tableKey(m.run.task.table));
            busy.add(tableKey(m.run.task.table));
          }
          taken += appended.length;
          return appended.map(({ run }) => ({ taskRun: run.taskRun, task: run.task }));
        } catch (error) {
          this.#log(leader).warn({ err: error }, 'resident session: no append this time');
          return [];
        }
      },
      onEnd: async (taskRun, end) => {
        const table = tableOf.get(taskRun);
        if (table !== undefined) busy.delete(table);
        lastEndAt = Date.now();
        longestTaskMs = Math.max(longestTaskMs, endFigures(end)?.durationMs ?? 0);
        if (taskRun === leader.taskRun) return onLeaderEnd(end);
        const member = byTaskRun.get(taskRun);
        if (member === undefined || member.ended === true) return;
        member.ended = true;
        await this.#endMember(member, end, size);
      },
    };
  }

  /**
   * A resident session's leader as its own result appears (ADR 0046), reported as a member is
   * (`#endMember`): its end recorded first — a dispatcher that dies from here on reports it
   * again, never runs it — then its sizing sample and its `succeeded` with its ledger entry.
   * Its job is not ended here: it holds the worker slot and the quota claim while the
   * application lives, and `#process` ends it (and asks for the rescan) at the exit. A failure
   * is left to the exit (`leaderReportedAtResult`). Never throws: what fails here is done at
   * the exit instead (a report may then repeat: events are at least once).
   */
  async #reportLeaderAtResult(run: Run, progress: Progress, end: RunEnd): Promise<void> {
    if (!leaderReportedAtResult(end.ok) || progress.atResult !== undefined) return;
    try {
      const cores = this.#coresOf(run, progress.cores);
      const endedAt = ownEndedAt(progress.startedAt, end, Date.now());
      const record = { attempt: run.attempt, runId: run.runId, end, endedAt, cores };
      await this.#recordEnd(run, record, progress);
      const basis = { startedAt: progress.startedAt, endedAt, cores };
      await this.#report(run, end, progress.before, basis, false);
      progress.atResult = record;
    } catch (error) {
      this.#log(run).warn({ err: error }, 'session leader not reported at its result');
    }
  }

  /**
   * One append to a live resident session (see `#residentBatch`): the members it added. Looks
   * at the queue only when the session has room (`appendRoom`), and at no more waiting jobs
   * than a few times that room (some are passed over: large, another catalog's, a busy table).
   */
  async #append(
    leader: Run,
    ref: BatchRef,
    session: LiveSession,
    lockMs: number,
  ): Promise<BatchMember[]> {
    const { runner } = this.#o;
    const limits = this.#o.batch ?? {};
    const token = leader.token ?? '';
    const room = appendRoom(session, limits);
    if (room === 0) return [];
    const waiting = await this.#claims.peek(3 * room);
    const idOf = new Map<Task, string>();
    for (const job of waiting) {
      if (job.started) continue;
      try {
        idOf.set(parseTask(JSON.parse(job.data)), job.id);
      } catch {
        // Invalid data fails in its own processing, with the reason; not appended.
      }
    }
    const chosen = selectAppend(session, [...idOf.keys()], limits);
    if (chosen.length === 0) return [];
    const held = await this.#claims.claim(
      chosen.map((t) => idOf.get(t) ?? ''),
      token,
      lockMs,
    );
    const added: BatchMember[] = [];
    for (const id of held) {
      const run = await this.#heldRun(id, token);
      if (run !== undefined) added.push({ run, startedAt: 0, before: undefined });
    }
    if (added.length === 0) return [];
    const batchId = this.#batchName(ref);
    // The record first (`started` and its batch, as a batch member's): a dispatcher that dies
    // after it leaves each job to follow the batch for itself — its task ran, or it ends lost
    // and is retried; never a task the application runs unknown to the dispatcher.
    for (const m of added) {
      m.run.runId = batchId;
      Object.assign(m, await this.#recordStarted(m.run, { ...ref, taskAttempt: m.run.attempt }));
    }
    const tasks: BatchTask[] = added.map(({ run }) => ({ taskRun: run.taskRun, task: run.task }));
    if (!(await runner.appendToBatch!(ref, tasks))) {
      // The inbox closed meanwhile: not this application's. Back to wait, for a launch of
      // their own (or another leader's batch), as a task that waited for room; their next
      // `started` repeats this one (events are at least once).
      for (const m of added) await this.#unrecordStarted(m.run);
      this.#log(leader).info({ tasks: added.length }, 'resident session closed: not appended');
      return [];
    }
    this.#log(leader).info({ tasks: added.length }, 'resident session: tasks appended');
    return added;
  }

  /** Undoes `#recordStarted` and puts the held job back to wait (as one waiting for room). */
  async #unrecordStarted(run: Run): Promise<void> {
    const key = this.#jobKey(run.job);
    await this.#o.connection.hdel(
      key,
      Field.started,
      Field.startedAt,
      Field.batch,
      Field.before,
      Field.run,
    );
    await this.#o.connection.hset(key, Field.quotaWait, String(run.attempt));
    await run.job.moveToDelayed(Date.now(), run.token);
  }

  #batchRunner(): Required<Pick<SparkRunner, 'runBatch'>> {
    const { runner } = this.#o;
    if (runner.runBatch === undefined) throw new Error(`runner ${runner.kind} runs no batches`);
    return { runBatch: (request) => runner.runBatch!(request) };
  }

  /** A job just held for a batch as a run of its own attempt; a job with bad data fails. */
  async #heldRun(id: string, token: string): Promise<Run | undefined> {
    const job = await Job.fromId(this.#queue, id);
    if (job === undefined) return undefined;
    let task: Task;
    try {
      task = parseTask(job.data);
    } catch (error) {
      await job.moveToFailed(
        new UnrecoverableError(`invalid task: ${(error as Error).message}`),
        token,
        false,
      );
      return undefined;
    }
    const [attemptText, growText] = await this.#o.connection.hmget(
      this.#jobKey(job),
      Field.attempt,
      Field.grow,
    );
    return {
      job,
      token,
      task,
      taskRun: `${task.id}@${String(job.timestamp)}`,
      attempt: Number(attemptText ?? '1'),
      runId: '',
      grow: typeof growText === 'string' ? (JSON.parse(growText) as Growth) : NO_GROWTH,
    };
  }

  /** `started` of a task in a batch: its event and its job's fields, before the launch. */
  async #recordStarted(
    run: Run,
    batch: BatchRef,
  ): Promise<{ started: true; startedAt: number; before: HealthFigures | undefined }> {
    const { task, attempt, runId } = run;
    const before = await this.#figures(task);
    const startedAt = Date.now();
    await this.#event(task, 'started', { attempt, runId, ...(before ? { before } : {}) });
    const location = this.#o.runner.batchLocation?.({ ...batch, binding: this.#o.binding });
    await this.#o.connection.hset(this.#jobKey(run.job), {
      [Field.started]: String(attempt),
      [Field.startedAt]: String(startedAt),
      [Field.batch]: JSON.stringify(batch),
      ...(before ? { [Field.before]: JSON.stringify(before) } : {}),
      ...(location ? { [Field.run]: JSON.stringify(location) } : {}),
    });
    return { started: true, startedAt, before };
  }

  /**
   * Ends a held job by its own task's end, as `#process` ends a job: the end recorded first
   * (a crash from here on reports it, never runs it), its sample, its events, then the job
   * completed, put back for a retry (`#retryLater` moved it) or failed.
   */
  async #endMember(member: BatchMember, found: RunEnd | undefined, size: JobSize): Promise<void> {
    const { run, startedAt, before } = member;
    const end = found ?? NO_BATCH_END;
    const cores = coresOf(size);
    const endedAt = ownEndedAt(startedAt, end, Date.now());
    try {
      await this.#recordEnd(
        run,
        { attempt: run.attempt, runId: run.runId, end, endedAt, cores },
        { size, startedAt },
      );
      let value: unknown;
      try {
        value = await this.#report(run, end, before, { startedAt, endedAt, cores });
      } catch (error) {
        if (error instanceof DelayedError) return; // moved to delayed for its retry
        await run.job.moveToFailed(error as Error, run.token ?? '', false);
        return;
      }
      await run.job.moveToCompleted(value, run.token ?? '', false);
    } catch (error) {
      // Its lock lapses and it is processed again: it reports the recorded end, or follows.
      this.#log(run).warn({ err: error }, 'batch task not ended here');
    }
  }

  /**
   * A job whose attempt was recorded in a batch (processed again after a crash, or after the
   * batch's state was unknown): follows that batch for its own task only. The batch is never
   * launched anew with the others — their jobs follow it for themselves; if it was never
   * launched, it is launched with this task alone. No quota claim: the batch's was its
   * leader's.
   */
  async #followBatch(run: Run, progress: Progress, batch: BatchRef): Promise<RunEnd> {
    const size = progress.size ?? this.#size(run.task, {}, run.grow).size;
    progress.size = size;
    progress.cores = coresOf(size);
    const { reattached, ends } = await this.#batchRunner().runBatch({
      batchRun: batch.batchRun,
      attempt: batch.attempt,
      tasks: [{ taskRun: run.taskRun, task: run.task }],
      binding: this.#o.binding,
      size,
      catalog: this.#o.catalog,
      timeoutMs: this.#o.timeoutMs,
      // Not a dispatch of its own (no latency recorded): only the gate's permit goes back.
      onSubmitted: () => run.permit?.release(),
      ...traceparentOf(run.task),
    });
    this.#log(run).info({ reattached }, 'followed its batch for this task');
    return ends.get(run.taskRun) ?? NO_BATCH_END;
  }

  /** Reports how a run ended: success, a retry (next attempt) or the task's failure. */
  async #report(
    run: Run,
    end: RunEnd,
    before: HealthFigures | undefined,
    basis: CostBasis,
    rescan = true,
  ): Promise<unknown> {
    const { task, attempt, runId } = run;
    if (end.ok) {
      const after = await this.#figures(task);
      const job = jobFigures(end);
      const ledger = ledgerEntry({
        cores: basis.cores,
        runMs: basis.endedAt - basis.startedAt,
        // A resident session's held idle time before this task (ADR 0045): compute like the
        // run's own. The idle after the session's last task is its own entry (`#reportTail`).
        idleMs: endFigures(end)?.idleMs ?? 0,
        ...(job ? { job } : {}),
        ...(before ? { before } : {}),
        ...(after ? { after } : {}),
      });
      await this.#event(task, 'succeeded', {
        attempt,
        runId,
        ...(before ? { before } : {}),
        ...(after ? { after } : {}),
        ...ledger,
      });
      if (rescan) await this.#rescan(task);
      return end.result;
    }
    return this.#failed(run, end.error, before);
  }

  /**
   * The attempt had not started when the runner (or the quota read) failed: nothing runs.
   * The task is put back (`updated`) and tried again after a backoff; after `maxAttempts`
   * such errors in a row it fails.
   */
  async #runnerError(run: Run, cause: Error, errors: number, progress: Progress): Promise<never> {
    const error: TaskError = { kind: 'runner', message: cause.message, retryable: true };
    this.#o.logger.warn({ err: cause, taskId: run.task.id, runId: run.runId }, 'runner error');
    await this.#release(run, progress);
    const next = afterRunnerError(error, errors, this.#o);
    if (next.action === 'give-up') return this.#giveUp(run, next.error, progress.before);
    return this.#retryLater(
      run,
      'updated',
      // The task's last event is this one now: a wait after it is told again.
      { [Field.runnerErrors]: String(errors), [Field.waitTold]: '' },
      error,
      next.delayMs,
      next.reason,
    );
  }

  /**
   * The runner failed to launch or to follow a started attempt's run (API server unreachable,
   * …): the run's state is unknown and it may still be going. It counts as running until its
   * end is known: the job stays active (not delayed, where the planner could replace or
   * remove it and a drain would not wait for it) and keeps its quota claim; after a backoff
   * the same attempt is followed again — it re-attaches, or launches under the same name —
   * never a new attempt beside a live run. Only once the run's timeout has passed since the
   * attempt started does the task fail (`runner`) with the run's state still unknown.
   */
  async #unknownRun(run: Run, cause: Error, errors: number, progress: Progress): Promise<void> {
    const error: TaskError = { kind: 'runner', message: cause.message, retryable: true };
    this.#log(run).warn({ err: cause, errors }, 'runner error: the run state is unknown');
    // Its back-off (and a run followed for hours) holds no launch permit (ADR 0040): a
    // catalog whose launches fail must not close the gate on every other catalog.
    run.permit?.release();
    const next = afterUnknownRun(error, errors, Date.now() - progress.startedAt, this.#o);
    if (next.action === 'give-up') {
      await this.#release(run, progress);
      return this.#giveUp(run, next.error, progress.before);
    }
    await this.#o.connection.hset(this.#jobKey(run.job), Field.runnerErrors, String(errors));
    await this.#event(run.task, 'retrying', {
      attempt: run.attempt,
      runId: run.runId,
      error,
      reason: next.reason,
    });
    await sleep(next.delayMs);
  }

  async #rescan(task: Task): Promise<void> {
    try {
      await this.#o.sink.requestScan(task.table, task.id);
    } catch (error) {
      this.#o.logger.warn({ err: error, taskId: task.id }, 'scan request not published');
    }
  }

  /** A failed run: a retryable failure with attempts left is tried again as a new attempt. */
  #failed(run: Run, error: TaskError, before: HealthFigures | undefined): Promise<never> {
    const { attempt, task, grow } = run;
    // Judged on the attempt's size without quota limits: the group's bounds are what matter.
    const size = this.#size(task, {}, grow).size;
    const resource = resourceStep(error, size, this.#o.binding.spark, grow);
    const next = afterFailedRun(error, attempt, this.#o, resource);
    if (next.action === 'give-up') return this.#giveUp(run, next.error, before);
    return this.#retryLater(
      run,
      'retrying',
      {
        [Field.attempt]: String(attempt + 1),
        [Field.runnerErrors]: '0',
        [Field.grow]: JSON.stringify(resource?.action === 'grow' ? resource.grow : grow),
      },
      error,
      next.delayMs,
      next.reason,
    );
  }

  async #retryLater(
    run: Run,
    status: 'retrying' | 'updated',
    fields: Record<string, string>,
    error: TaskError,
    delayMs: number,
    reason: string,
  ): Promise<never> {
    await this.#o.connection.hset(this.#jobKey(run.job), fields);
    await this.#event(run.task, status, {
      attempt: run.attempt,
      runId: run.runId,
      error,
      reason,
    });
    await run.job.moveToDelayed(Date.now() + delayMs, run.token);
    throw new DelayedError();
  }

  async #giveUp(run: Run, error: TaskError, before: HealthFigures | undefined): Promise<never> {
    await this.#event(run.task, 'failed', {
      attempt: run.attempt,
      runId: run.runId,
      error,
      reason: error.message,
      ...(before ? { before } : {}),
    });
    // A failed task may have committed partial progress: let the scanner look again.
    await this.#rescan(run.task);
    throw new UnrecoverableError(`${error.kind}: ${error.message}`);
  }
}

/** The task the batch is sized by: the largest bytes and files of the tasks it runs. */
function largestOf(task: Task, others: readonly { task: Task }[]): Task {
  if (others.length === 0) return task;
  const all = [task, ...others.map((o) => o.task)];
  return {
    ...task,
    state: {
      ...task.state,
      bytesToRewrite: Math.max(...all.map((t) => t.state.bytesToRewrite)),
      filesToRewrite: Math.max(...all.map((t) => t.state.filesToRewrite)),
    },
  };
}

/** `traceparent` of the active span (the dispatch), else the task's; none outside a trace. */
function traceparentOf(task: Task): { traceparent?: string } {
  const active = injectTraceparent<{ traceparent?: string }>({}).traceparent;
  const traceparent = active ?? task.traceparent;
  return traceparent === undefined ? {} : { traceparent };
}
