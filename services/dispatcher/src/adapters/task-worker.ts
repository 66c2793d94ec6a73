import { DelayedError, Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { injectTraceparent, inSpan, type Logger } from '@icepack/runtime';
import {
  BULLMQ_PREFIX,
  parseTask,
  queueNameForCatalog,
  type Binding,
  type HealthFigures,
  type Task,
  type TaskError,
  type TaskEvent,
  type TaskStatus,
} from '@icepack/types';
import { sizeJob, type SizingOptions } from '../domain/sizing.ts';
import type { CatalogConnection, RunOutcome, SparkRunner } from '../runners/spark-runner.ts';
import type { QuotaGate } from './quota.ts';
import type { TableHealthReader } from './table-health.ts';
import type { DispatchSink } from './task-events.ts';

export interface TaskWorkerOptions {
  readonly binding: Binding;
  /** A worker-role connection (`maxRetriesPerRequest: null`). */
  readonly connection: Redis;
  readonly runner: SparkRunner;
  readonly quota: QuotaGate;
  readonly sink: DispatchSink;
  readonly health: TableHealthReader;
  readonly catalog: CatalogConnection;
  readonly logger: Logger;
  /** BullMQ key prefix. Default `BULLMQ_PREFIX`. */
  readonly prefix?: string;
  /** Runs of a task (first + retries after retryable failures). Default 3. */
  readonly maxAttempts?: number;
  /** Backoff before retry n: `backoffMs × 2^(n−1)`. Default 30 s. */
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
  /** Told the time from dequeue (BullMQ `processedOn`) to the run being submitted. */
  readonly onDispatched?: (latencyMs: number, task: Task) => void;
}

/** Fields the dispatcher keeps in the BullMQ job hash (deleted with the job). */
const Field = {
  attempt: 'icepack:attempt',
  before: 'icepack:before',
  started: 'icepack:started',
} as const;

function minFileSize(task: Task): number | undefined {
  return task.type === 'cleanup' ? undefined : task.parameters.minFileSizeBytes;
}

/**
 * One binding's dispatch: a BullMQ worker on the catalog's queue, at most `slots` tasks at
 * once across all dispatchers (global concurrency).
 */
export class TaskWorker {
  readonly queueName: string;
  readonly #o: Required<Omit<TaskWorkerOptions, 'sizing' | 'onDispatched'>> &
    Pick<TaskWorkerOptions, 'onDispatched'> & { sizing: SizingOptions };
  readonly #queue: Queue;
  #worker: Worker | undefined;

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
      ...options,
    };
    this.queueName = queueNameForCatalog(options.binding.catalog);
    this.#queue = new Queue(this.queueName, {
      connection: options.connection,
      prefix: this.#o.prefix,
    });
  }

  async start(): Promise<void> {
    await this.#queue.setGlobalConcurrency(this.#o.binding.slots);
    this.#worker = new Worker(this.queueName, (job, token) => this.#traced(job, token), {
      connection: this.#o.connection,
      prefix: this.#o.prefix,
      concurrency: this.#o.binding.slots,
      lockDuration: this.#o.lockDurationMs,
      stalledInterval: this.#o.lockDurationMs,
      maxStalledCount: this.#o.maxStalledCount,
    });
    this.#worker.on('error', (error) =>
      this.#o.logger.warn({ err: error, queue: this.queueName }, 'worker error'),
    );
  }

  /** Stops taking tasks; waits for running ones unless `force`. */
  async close(force = false): Promise<void> {
    await this.#worker?.close(force);
    await this.#queue.close();
  }

  #jobKey(job: Job): string {
    return `${this.#o.prefix}:${this.queueName}:${String(job.id)}`;
  }

  async #event(
    task: Task,
    status: TaskStatus,
    extra: Partial<Pick<TaskEvent, 'reason' | 'before' | 'after' | 'error' | 'attempt'>> = {},
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
      return await this.#o.health.read(task.table, minFileSize(task));
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
        attributes: { 'icepack.task.id': String(job.id), 'icepack.queue': this.queueName },
        // Waiting for quota or a retry backoff is not a failed dispatch.
        expected: (error) => error instanceof DelayedError,
      },
      () => this.#process(job, token),
    );
  }

  async #process(job: Job, token: string | undefined): Promise<unknown> {
    let task: Task;
    try {
      task = parseTask(job.data);
    } catch (error) {
      throw new UnrecoverableError(`invalid task: ${(error as Error).message}`);
    }
    const { binding } = this.#o;
    const redis = this.#o.connection;
    const key = this.#jobKey(job);
    const [attemptText, savedBefore, startedText] = await redis.hmget(
      key,
      Field.attempt,
      Field.before,
      Field.started,
    );
    const attempt = Number(attemptText ?? '1');
    const runId = `${task.id}@${String(job.timestamp)}`;
    const log = this.#o.logger.child({ taskId: task.id, attempt, queue: this.queueName });

    // `started` is recorded before every launch: without it this attempt never launched, and
    // the runner need not be asked (one API call less on the hot path).
    const launched =
      startedText === String(attempt) &&
      (await this.#o.runner.isLaunched({ runId, attempt, binding, task }));
    const room = launched ? {} : await this.#o.quota.room(binding);
    const decision = sizeJob(
      {
        bytes: task.state.bytesToRewrite,
        files: task.state.filesToRewrite,
        minInputFiles: task.type === 'cleanup' ? 1 : task.parameters.minInputFiles,
        spark: binding.spark,
        room,
      },
      this.#o.sizing,
    );
    const claimId = `${runId}#${String(attempt)}`;
    if (
      !launched &&
      (!decision.fits || !(await this.#o.quota.acquire(binding, claimId, decision.size.request)))
    ) {
      const reason = decision.fits ? 'quota claimed by another task' : decision.reason;
      log.info({ reason }, 'waiting for quota');
      await this.#event(task, 'updated', { reason: `waiting for quota: ${reason}` });
      await job.moveToDelayed(Date.now() + this.#o.quotaWaitMs, token);
      throw new DelayedError();
    }

    const before: HealthFigures | undefined =
      typeof savedBefore === 'string'
        ? (JSON.parse(savedBefore) as HealthFigures)
        : await this.#figures(task);
    if (startedText !== String(attempt)) {
      await this.#event(task, 'started', { attempt, ...(before ? { before } : {}) });
      await redis.hset(key, {
        [Field.started]: String(attempt),
        ...(before ? { [Field.before]: JSON.stringify(before) } : {}),
      });
    }

    let outcome: RunOutcome;
    try {
      outcome = await this.#o.runner.run({
        runId,
        task,
        attempt,
        binding,
        size: decision.size,
        catalog: this.#o.catalog,
        timeoutMs: this.#o.timeoutMs,
        onSubmitted: () =>
          this.#o.onDispatched?.(Date.now() - (job.processedOn ?? Date.now()), task),
        // The dispatch span's context (the task's own when nothing is exported): the job's
        // span is a child of this dispatch.
        ...traceparentOf(task),
      });
    } catch (error) {
      outcome = {
        ok: false,
        reattached: false,
        error: { kind: 'runner', message: (error as Error).message, retryable: true },
      };
    } finally {
      await this.#o.quota.release(binding, claimId);
    }
    if (outcome.reattached) log.info('followed an existing run (no second launch)');

    if (outcome.ok) {
      const after = await this.#figures(task);
      await this.#event(task, 'succeeded', {
        attempt,
        ...(before ? { before } : {}),
        ...(after ? { after } : {}),
      });
      await this.#rescan(task);
      return outcome.result;
    }
    return this.#failed(job, token, task, attempt, outcome.error, before);
  }

  async #rescan(task: Task): Promise<void> {
    try {
      await this.#o.sink.requestScan(task.table, task.id);
    } catch (error) {
      this.#o.logger.warn({ err: error, taskId: task.id }, 'scan request not published');
    }
  }

  async #failed(
    job: Job,
    token: string | undefined,
    task: Task,
    attempt: number,
    error: TaskError,
    before: HealthFigures | undefined,
  ): Promise<never> {
    if (error.retryable && attempt < this.#o.maxAttempts) {
      const delay = this.#o.backoffMs * 2 ** (attempt - 1);
      await this.#o.connection.hset(this.#jobKey(job), Field.attempt, String(attempt + 1));
      await this.#event(task, 'retrying', {
        attempt,
        error,
        reason: `retry ${String(attempt + 1)} of ${String(this.#o.maxAttempts)} in ${String(Math.round(delay / 1000))}s`,
      });
      await job.moveToDelayed(Date.now() + delay, token);
      throw new DelayedError();
    }
    await this.#event(task, 'failed', {
      attempt,
      error,
      reason: error.message,
      ...(before ? { before } : {}),
    });
    // A failed task may have committed partial progress: let the scanner look again.
    await this.#rescan(task);
    throw new UnrecoverableError(`${error.kind}: ${error.message}`);
  }
}

/** `traceparent` of the active span (the dispatch), else the task's; none outside a trace. */
function traceparentOf(task: Task): { traceparent?: string } {
  const active = injectTraceparent<{ traceparent?: string }>({}).traceparent;
  const traceparent = active ?? task.traceparent;
  return traceparent === undefined ? {} : { traceparent };
}
