import {
  BULLMQ_PREFIX,
  JOB_RUN_LOCATION_FIELD,
  MAX_PRIORITY,
  MAX_TASK_GROUPS,
  MIN_PRIORITY,
  queueNameForCatalog,
  runLocationSchema,
  tableKey,
  taskJobId,
  taskJobIdOfKey,
  TaskType,
} from '@icepack/types';
import type { RunLocation } from '@icepack/types';
import type { TableId, Task } from '@icepack/types';
import { Queue, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { Packr } from 'msgpackr';
import type { PendingTask, PendingTasks } from '../domain/rules.ts';
import { isRunNow, runNowScore, withAging, type ScoreOptions } from '../domain/score.ts';
import { Coalescer } from './coalescer.ts';
import {
  ADD_PRIORITIZED_JOBS,
  INSPECT_JOBS,
  OLDEST_WAITING,
  UPDATE_WAITING_JOBS,
} from './queue-scripts.ts';

/** Where a job is, as BullMQ keeps it. */
export type JobState =
  | 'prioritized'
  | 'delayed'
  | 'wait'
  | 'paused'
  | 'active'
  | 'completed'
  | 'failed'
  | 'unknown'
  | 'missing';

export interface JobSnapshot {
  readonly state: JobState;
  /** The job data (the task) when the job exists. */
  readonly task?: Task;
  /** The raw data string, for compare-and-set updates. */
  readonly raw?: string;
}

/**
 * The table's jobs: per type its group-1 job (`taskJobId(table, type)`), and in `groups` every
 * group's (index 0 = group 1) — a partition-scoped plan has up to MAX_TASK_GROUPS per type.
 */
export type TableJobs = Readonly<Record<TaskType, JobSnapshot>> & {
  readonly groups: Readonly<Record<TaskType, readonly JobSnapshot[]>>;
};

const WAITING: ReadonlySet<JobState> = new Set(['prioritized', 'delayed', 'wait', 'paused']);
const FINISHED: ReadonlySet<JobState> = new Set(['completed', 'failed', 'unknown']);

function pendingOf(job: JobSnapshot | undefined): PendingTask | undefined {
  if (job === undefined) return undefined;
  if (WAITING.has(job.state))
    return { status: 'waiting', ...(job.task ? { createdAt: job.task.createdAt } : {}) };
  return job.state === 'active' ? { status: 'active' } : undefined;
}

/** Per type and group, what is pending: waiting (also delayed), active, or nothing. */
export function groupsPendingFrom(
  jobs: TableJobs,
): Record<TaskType, readonly (PendingTask | undefined)[]> {
  const out = {} as Record<TaskType, (PendingTask | undefined)[]>;
  for (const type of Object.values(TaskType)) out[type] = jobs.groups[type].map(pendingOf);
  return out;
}

/**
 * What is pending for the rules, over all groups of a type: active when any group runs, else
 * waiting when any waits (with the earliest group's creation time).
 */
export function pendingFrom(jobs: TableJobs): PendingTasks {
  const pending: Partial<Record<TaskType, PendingTask>> = {};
  for (const [type, groups] of Object.entries(groupsPendingFrom(jobs)) as [
    TaskType,
    readonly (PendingTask | undefined)[],
  ][]) {
    const active = groups.find((p) => p?.status === 'active');
    const waiting = groups.find((p) => p?.status === 'waiting');
    const p = active ?? waiting;
    if (p !== undefined) pending[type] = p;
  }
  return pending;
}

const TYPES = Object.values(TaskType);

/**
 * The table's jobs from what `INSPECT_JOBS_LUA` answered for {@link TaskQueue.inspectArgs}'s
 * ids: a state and a data string per id, in that order.
 */
export function jobsFrom(reply: readonly string[]): TableJobs {
  const snapshotAt = (i: number): JobSnapshot => {
    const state = reply[2 * i] as JobState;
    const raw = reply[2 * i + 1] ?? '';
    return raw === '' ? { state } : { state, raw, task: JSON.parse(raw) as Task };
  };
  const groups = {} as Record<TaskType, JobSnapshot[]>;
  TYPES.forEach((type, t) => {
    groups[type] = Array.from({ length: MAX_TASK_GROUPS }, (_, g) =>
      snapshotAt(t * MAX_TASK_GROUPS + g),
    );
  });
  return {
    cleanup: groups.cleanup[0]!,
    merge: groups.merge[0]!,
    sort: groups.sort[0]!,
    orphans: groups.orphans[0]!,
    groups,
  };
}

export interface TaskQueueOptions {
  /** Shared ioredis connection: the planner's own scripts and reads. Required. */
  readonly connection: Redis;
  /**
   * The connection BullMQ's queue objects use (removals, listings, the queue's meta). Default
   * `connection`. Apart, the planner's own commands (its adds among them, ADR 0057) go in
   * pipelines without BullMQ's scripts: BullMQ defines its ~60 scripts on the connection it is
   * given, and ioredis copies every defined script into each pipeline it builds — with
   * auto-pipelining, each batch (issue 17 point 6).
   */
  readonly queueConnection?: Redis;
  /** BullMQ key prefix. Default `icepack` (`BULLMQ_PREFIX`). */
  readonly prefix?: string;
  /** Queue objects kept open, least recently used dropped first. Default {@link QUEUE_CACHE_SIZE}. */
  readonly maxCachedQueues?: number;
}

/** How many per-catalog queue objects the planner keeps (LRU); a dropped one is reopened on use. */
export const QUEUE_CACHE_SIZE = 256;

/** A waiting task as the queue API lists it. */
export interface WaitingTask {
  readonly position: number;
  readonly state: 'prioritized' | 'delayed';
  readonly priority: number;
  readonly task: Task;
}

type UpdateResult = 'updated' | 'not-waiting' | 'changed';

// How long an index entry may point at no job before it is dropped: the entry is written in
// the add's script, but planner clocks may differ a little (and planners before ADR 0057
// wrote it in a command of its own, just before the add).
const INDEX_GRACE_MS = 60_000;
// Index entries one measurement looks at, at most (a backlog of gone entries is dropped
// over several measurements rather than in one long script).
const INDEX_BUDGET = 1_000;

/** The created index of the queue whose key prefix is `base` (see `TaskQueue.#createdIndex`). */
function createdIndexOf(base: string): string {
  return `${base}icepack:created`;
}

// BullMQ's packer, with its options: what its add script unpacks.
const packer = new Packr({ useRecords: false, encodeUndefinedAsNil: true });

/**
 * The planner's side of the per-catalog BullMQ queues: one queue per catalog
 * (`queueNameForCatalog`), job id `taskJobId(table, type)`, job data the task.
 */
export class TaskQueue {
  readonly #redis: Redis;
  readonly #queueRedis: Redis;
  readonly #prefix: string;
  // Insertion order is recency order: a hit moves the catalog to the end.
  readonly #queues = new Map<string, Queue>();
  readonly #maxQueues: number;
  readonly #updates = new Coalescer<{ task: Task; expectedRaw: string }, UpdateResult>((u) =>
    this.#updateMany(u),
  );
  readonly #adds = new Coalescer<Task, unknown>((tasks) => this.#addMany(tasks));

  constructor(options: TaskQueueOptions) {
    this.#redis = options.connection;
    this.#queueRedis = options.queueConnection ?? options.connection;
    this.#prefix = options.prefix ?? BULLMQ_PREFIX;
    this.#maxQueues = Math.max(1, options.maxCachedQueues ?? QUEUE_CACHE_SIZE);
  }

  /** Queue objects currently cached (at most `maxCachedQueues`). */
  get cachedQueues(): number {
    return this.#queues.size;
  }

  /** The catalog's queue (created on first use, then cached, least recently used dropped). */
  queue(catalog: string): Queue {
    let queue = this.#queues.get(catalog);
    if (queue !== undefined) {
      this.#queues.delete(catalog);
      this.#queues.set(catalog, queue);
      return queue;
    }
    queue = new Queue(queueNameForCatalog(catalog), {
      connection: this.#queueRedis,
      prefix: this.#prefix,
    });
    this.#queues.set(catalog, queue);
    for (const [oldest, dropped] of this.#queues) {
      if (this.#queues.size <= this.#maxQueues) break;
      this.#queues.delete(oldest);
      // The connection is shared: closing the queue object only detaches it.
      dropped.close().catch(() => undefined);
    }
    return queue;
  }

  #base(catalog: string): string {
    return `${this.#prefix}:${queueNameForCatalog(catalog)}:`;
  }

  /**
   * The planner's index of the catalog's tasks by `createdAt` (job id → ms), for the oldest
   * waiting task's age. Under the queue's prefix (removed with the queue); the `:` in its
   * name keeps it apart from job ids, which have none.
   */
  #createdIndex(catalog: string): string {
    return createdIndexOf(this.#base(catalog));
  }

  /**
   * The state and data of the table's possible jobs (each type's MAX_TASK_GROUPS group ids),
   * read atomically in one round trip.
   */
  async inspect(table: TableId): Promise<TableJobs> {
    const { base, ids } = this.inspectArgs(table);
    return jobsFrom((await INSPECT_JOBS.run(this.#redis, [], [base, ...ids])) as string[]);
  }

  /** What {@link inspect} reads: the queue's key prefix and the table's possible job ids. */
  inspectArgs(table: TableId): { readonly base: string; readonly ids: readonly string[] } {
    const key = tableKey(table);
    return {
      base: this.#base(table.catalog),
      ids: TYPES.flatMap((type) =>
        Array.from({ length: MAX_TASK_GROUPS }, (_, g) => taskJobIdOfKey(key, type, g + 1)),
      ),
    };
  }

  /**
   * Enqueues a task unless a job under its id waits or runs (`existing`, from
   * {@link inspect}; false then). A finished job under the id is removed first: it would
   * block the add. Should a job appear in between, BullMQ ignores the add (same id). The job
   * is the one `Queue.add` would make; the adds of one turn go in one command (ADR 0057).
   */
  async create(task: Task, existing: JobState = 'missing'): Promise<boolean> {
    if (existing !== 'missing' && !FINISHED.has(existing)) return false;
    // What BullMQ's `Job` checks of the options it is given (the task schema bounds it too).
    const { priority } = task.score;
    if (!Number.isInteger(priority) || priority < MIN_PRIORITY || priority > MAX_PRIORITY)
      throw new Error(`task ${task.id}: priority ${priority} is not a BullMQ priority`);
    const queue = this.queue(task.table.catalog);
    if (existing !== 'missing') await queue.remove(task.id);
    await this.#adds.call(task);
    return true;
  }

  /**
   * Replaces a waiting task's data and priority in place (it keeps its place among equal
   * priorities). Never touches a running job. With `expectedRaw`, only if the data is
   * still that (compare-and-set, used by aging). The updates made in one turn go in one
   * command ({@link Coalescer}).
   */
  update(task: Task, expectedRaw = ''): Promise<UpdateResult> {
    return this.#updates.call({ task, expectedRaw });
  }

  /**
   * The adds made in one turn, in one command: each job as `Queue.add(task.type, task, { jobId,
   * priority, removeOnComplete: true, removeOnFail: true })` writes it, by BullMQ's own script
   * ({@link ADD_PRIORITIZED_JOBS}), each after its created-index entry.
   */
  async #addMany(tasks: readonly Task[]): Promise<unknown[]> {
    const args: (string | Buffer)[] = [String(tasks.length)];
    const now = Date.now();
    for (const task of tasks) {
      const base = this.#base(task.table.catalog);
      args.push(
        base,
        createdIndexOf(base),
        String(Date.parse(task.createdAt)),
        task.id,
        // `Job.create`'s arguments for a job without parent, repeat or deduplication.
        packer.pack([base, task.id, task.type, now, null, null, undefined, undefined, null, null]),
        JSON.stringify(task),
        // The job's options as `Job` completes and `optsAsJSON` encodes them.
        packer.pack({
          attempts: 0,
          jobId: task.id,
          priority: task.score.priority,
          // The id must be free for the table's next task of this type; history lives in
          // the task events on Kafka.
          removeOnComplete: true,
          removeOnFail: true,
        }),
      );
    }
    return (await ADD_PRIORITIZED_JOBS.run(this.#redis, [], args)) as unknown[];
  }

  /** {@link update}s made in one turn, in one command; their results in order. */
  async #updateMany(
    updates: readonly { readonly task: Task; readonly expectedRaw: string }[],
  ): Promise<UpdateResult[]> {
    const args: string[] = [String(updates.length)];
    for (const { task, expectedRaw } of updates) {
      const base = this.#base(task.table.catalog);
      args.push(
        `${base}prioritized`,
        `${base}delayed`,
        `${base}${task.id}`,
        task.id,
        String(task.score.priority),
        JSON.stringify(task),
        expectedRaw,
      );
    }
    const codes = (await UPDATE_WAITING_JOBS.run(this.#redis, [], args)) as number[];
    return codes.map((code) => (code === 1 ? 'updated' : code === 0 ? 'not-waiting' : 'changed'));
  }

  /**
   * "Run now" (ADR 0024): raises a waiting task to the front of its catalog's queue — its
   * score gets the `run-now` part, so its priority is the highest and stays so through aging
   * and re-plans. Compare-and-set on the job's data (a concurrent update is retried). The
   * raised task, or why not: `not-waiting` (running, finished or gone), `already`.
   */
  async runNow(
    table: TableId,
    type: TaskType,
  ): Promise<{ outcome: 'raised' | 'already' | 'not-waiting'; task?: Task }> {
    for (;;) {
      const job = (await this.inspect(table))[type];
      if (job.task === undefined || !(job.state === 'prioritized' || job.state === 'delayed'))
        return { outcome: 'not-waiting' };
      if (isRunNow(job.task.score)) return { outcome: 'already', task: job.task };
      const task = { ...job.task, score: runNowScore(job.task.score) };
      const result = await this.update(task, job.raw);
      if (result === 'updated') return { outcome: 'raised', task };
      if (result === 'not-waiting') return { outcome: 'not-waiting' };
    }
  }

  /**
   * Where each running job's attempt runs and where its logs are, as the dispatcher recorded
   * it (`JOB_RUN_LOCATION_FIELD`); null when not recorded (yet) or unreadable.
   */
  async runLocations(catalog: string, jobIds: readonly string[]): Promise<(RunLocation | null)[]> {
    if (jobIds.length === 0) return [];
    const base = this.#base(catalog);
    const pipeline = this.#redis.pipeline();
    for (const id of jobIds) pipeline.hget(`${base}${id}`, JOB_RUN_LOCATION_FIELD);
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([error, raw]) => {
      if (error !== null || typeof raw !== 'string') return null;
      try {
        const parsed = runLocationSchema.safeParse(JSON.parse(raw));
        return parsed.success ? parsed.data : null;
      } catch {
        return null;
      }
    });
  }

  /**
   * Removes a waiting job of one partition group, or — without `group` — of every group of
   * the type; false when none was removed (running, locked, or gone).
   */
  async removeWaiting(table: TableId, type: TaskType, group?: number): Promise<boolean> {
    const queue = this.queue(table.catalog);
    // BullMQ's remove answers 1 for an id with no job too: only ids that wait are removed.
    const groups =
      group !== undefined
        ? [group]
        : (await this.inspect(table)).groups[type].flatMap((job, g) =>
            WAITING.has(job.state) ? [g + 1] : [],
          );
    const removed = await Promise.all(
      groups.map(async (g) => (await queue.remove(taskJobId(table, type, g))) === 1),
    );
    return removed.some(Boolean);
  }

  /** Waiting tasks in run order (prioritized by priority then age, then delayed ones). */
  async waiting(catalog: string, limit = 1000): Promise<WaitingTask[]> {
    const queue = this.queue(catalog);
    const prioritized = await queue.getJobs(['prioritized'], 0, limit - 1, true);
    const rest = Math.max(0, limit - prioritized.length);
    const delayed = rest > 0 ? await queue.getJobs(['delayed'], 0, rest - 1, true) : [];
    const list: WaitingTask[] = [];
    for (const [state, jobs] of [
      ['prioritized', prioritized],
      ['delayed', delayed],
    ] as const) {
      for (const job of jobs) {
        list.push({
          position: list.length + 1,
          state,
          priority: job.priority,
          task: job.data as Task,
        });
      }
    }
    return list;
  }

  /**
   * The `createdAt` (ms) of the catalog's oldest task that waits — prioritized, delayed
   * (for a large-task slot or a retry backoff), wait or paused; not one that runs. Null when
   * none waits; undefined when this measurement could not tell (a backlog of finished tasks'
   * entries was being dropped). A few Redis commands, whatever the queue's length.
   */
  async oldestWaiting(catalog: string, now: Date): Promise<number | null | undefined> {
    const base = this.#base(catalog);
    const reply = (await OLDEST_WAITING.run(
      this.#redis,
      [
        this.#createdIndex(catalog),
        `${base}prioritized`,
        `${base}delayed`,
        `${base}wait`,
        `${base}paused`,
      ],
      [base, String(now.getTime()), String(INDEX_GRACE_MS), String(INDEX_BUDGET)],
    )) as string | number;
    if (reply === -1) return null;
    if (reply === -2) return undefined;
    return Number(reply);
  }

  /**
   * The aging pass over one catalog: recomputes the waiting part of every waiting task's
   * score and raises its priority where it crossed a step. Returns how many were raised.
   */
  async age(catalog: string, now: Date, options: ScoreOptions, pageSize = 500): Promise<number> {
    const queue = this.queue(catalog);
    let raised = 0;
    for (const type of ['prioritized', 'delayed'] as const) {
      // Raising a priority moves a job forward, so a page may miss a job or see one twice;
      // either is harmless: the next pass catches up, and a second raise is a no-op.
      const total =
        type === 'prioritized' ? await queue.getPrioritizedCount() : await queue.getDelayedCount();
      for (let start = 0; start < total; start += pageSize) {
        const jobs = await queue.getJobs([type], start, start + pageSize - 1, true);
        await this.#indexCreated(catalog, jobs);
        const results = await Promise.all(
          jobs.map(async (job) => {
            const task = job.data as Task;
            const aged = withAging(task.score, now.getTime() - Date.parse(task.createdAt), options);
            if (aged.priority >= task.score.priority) return false;
            const raw = JSON.stringify(task);
            return (await this.update({ ...task, score: aged }, raw)) === 'updated';
          }),
        );
        raised += results.filter(Boolean).length;
      }
    }
    return raised;
  }

  /**
   * Adds waiting jobs the created index lacks (enqueued by a planner before the index
   * existed, or by hand); an entry already there is left as it is.
   */
  async #indexCreated(catalog: string, jobs: readonly Job[]): Promise<void> {
    const entries = jobs.flatMap((job) => {
      const createdAt = Date.parse((job.data as Task).createdAt);
      return Number.isNaN(createdAt) || job.id === undefined ? [] : [createdAt, job.id];
    });
    if (entries.length > 0) await this.#redis.zadd(this.#createdIndex(catalog), 'NX', ...entries);
  }

  async close(): Promise<void> {
    await Promise.all([...this.#queues.values()].map((queue) => queue.close()));
    this.#queues.clear();
  }
}
