import {
  counter,
  createInstruments,
  gauge,
  histogram,
  type Instruments,
  upDownCounter,
} from '@icepack/runtime';
import type { Meter } from '@opentelemetry/api';
import type { Binding, HealthFigures, TableId, Task, TaskEvent } from '@icepack/types';
import { concurrencyOf } from '../domain/lanes.ts';
import type { LaunchGate } from '../domain/launch-gate.ts';
import { WaitKind } from '../domain/waits.ts';
import {
  endFigures,
  type BatchOutcome,
  type BatchRunRequest,
  type RunOutcome,
  type RunRequest,
  type SparkRunner,
} from '../runners/spark-runner.ts';
import type { CatalogWorker } from './binding-registry.ts';
import type { DispatchSink } from './task-events.ts';

/** The runner's optional members (`location`, `runBatch`, `appendToBatch`, …). */
type OptionalRunnerMember = {
  [K in keyof SparkRunner]-?: undefined extends SparkRunner[K] ? K : never;
}[keyof SparkRunner];

/** Each optional member, passed through by `DispatchMetrics.runner` when the runner has it. */
const OPTIONAL_RUNNER_MEMBERS = [
  'location',
  'runBatch',
  'batchName',
  'batchLocation',
  'appendToBatch',
] as const satisfies readonly OptionalRunnerMember[];

// A member added to `SparkRunner` and not to the list above fails the type check here.
const everyOptionalMemberListed: Exclude<
  OptionalRunnerMember,
  (typeof OPTIONAL_RUNNER_MEMBERS)[number]
> extends never
  ? true
  : never = true;
void everyOptionalMemberListed;

/** The `outcome` label of `icepack.dispatcher.tasks.finished`: how a run of a task ended. */
export const FinishedOutcome = {
  succeeded: 'succeeded',
  /** Failed for good (not retryable, or the last attempt). */
  failed: 'failed',
  /** Failed and put back to run again after a backoff. */
  retried: 'retried',
} as const;
export type FinishedOutcome = (typeof FinishedOutcome)[keyof typeof FinishedOutcome];

// Task durations run from seconds (a small cleanup) to the 6 h timeout.
const DURATION_BUCKETS = [5, 15, 30, 60, 120, 300, 600, 1_200, 1_800, 3_600, 7_200, 14_400, 21_600];
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

const TASK = ['catalog', 'task_type'] as const;
const taskLabels = (table: TableId, type: Task['type']) => ({
  catalog: table.catalog,
  task_type: type,
});
type TaskLabels = ReturnType<typeof taskLabels>;

const INSTRUMENTS = {
  started: counter({
    name: 'icepack.dispatcher.tasks.started',
    description: 'Task runs launched (one per attempt)',
    attributes: TASK,
  }),
  finished: counter({
    name: 'icepack.dispatcher.tasks.finished',
    description: 'Task runs ended, by outcome (succeeded, failed, retried) and error kind',
    attributes: [...TASK, 'outcome'],
    optionalAttributes: ['error_kind'],
  }),
  quotaWaits: counter({
    name: 'icepack.dispatcher.quota_waits',
    description: 'Times a task was put back to wait for quota (no room, or claimed)',
    attributes: TASK,
  }),
  largeSlotWaits: counter({
    name: 'icepack.dispatcher.large_slot_waits',
    description:
      'Times a large task was put back because large tasks held all the catalog’s slots (ADR 0029)',
    attributes: TASK,
  }),
  duration: histogram({
    name: 'icepack.dispatcher.task.duration.seconds',
    description:
      "Time from launching a run to its end; a batch's task: its own run time in the application (re-attached runs not included)",
    unit: 's',
    attributes: [...TASK, 'outcome'],
    buckets: DURATION_BUCKETS,
  }),
  latency: histogram({
    name: 'icepack.dispatcher.dispatch.latency.seconds',
    description: 'Time from taking a task off the queue to its run being submitted',
    unit: 's',
    attributes: TASK,
    buckets: LATENCY_BUCKETS,
  }),
  reattached: counter({
    name: 'icepack.dispatcher.runs.reattached',
    description: 'Runs followed to their end without launching them (started before a restart)',
    attributes: TASK,
  }),
  rewrittenBytes: counter({
    name: 'icepack.dispatcher.rewritten.bytes',
    description: 'Bytes of data and delete files the succeeded tasks rewrote (as planned)',
    unit: 'By',
    attributes: TASK,
  }),
  rewrittenFiles: counter({
    name: 'icepack.dispatcher.rewritten.files',
    description: 'Data and delete files the succeeded tasks rewrote (as planned)',
    attributes: TASK,
  }),
  dataFilesRemoved: counter({
    name: 'icepack.dispatcher.data_files.removed',
    description: 'Net drop in data files across succeeded tasks (table figures before/after)',
    attributes: TASK,
  }),
  dataFilesAdded: counter({
    name: 'icepack.dispatcher.data_files.added',
    description: 'Net rise in data files across succeeded tasks (table figures before/after)',
    attributes: TASK,
  }),
  deleteFilesRemoved: counter({
    name: 'icepack.dispatcher.delete_files.removed',
    description: 'Net drop in delete files across succeeded tasks',
    attributes: TASK,
  }),
  snapshotsExpired: counter({
    name: 'icepack.dispatcher.snapshots.expired',
    description: 'Net drop in snapshots across succeeded tasks',
    attributes: TASK,
  }),
  slotsInUse: upDownCounter({
    name: 'icepack.dispatcher.slots.in_use',
    description:
      'Runs and batches this dispatcher follows now, per catalog (sum over replicas: slots in use)',
    attributes: ['catalog'],
  }),
  launchesInFlight: gauge({
    name: 'icepack.dispatcher.launches.in_flight',
    description:
      'Tasks this dispatcher took off their queues and has not yet submitted (ADR 0040: at most ICEPACK_DISPATCHER_MAX_LAUNCHES)',
    attributes: [],
  }),
  launchWaiters: gauge({
    name: 'icepack.dispatcher.launches.waiting',
    description:
      'Fetches and retries of this dispatcher waiting for a launch permit (ADR 0040): above 0 for long, the gate is the bottleneck',
    attributes: [],
  }),
  slots: gauge({
    name: 'icepack.dispatcher.slots',
    description:
      "Slots of the catalog's resource group, small-task lane included: slots + smallSlots (runs at once, all dispatchers)",
    attributes: ['catalog'],
  }),
};

/** How much a figure fell (`removed`) or rose (`added`) across a task; 0 for the other. */
function change(before: number, after: number): { removed: number; added: number } {
  return { removed: Math.max(0, before - after), added: Math.max(0, after - before) };
}

/**
 * The dispatcher's own metrics (Prometheus names `icepack_dispatcher_…`), labelled by
 * catalog and task type — never by table. They are taken from what the dispatcher already
 * reports, without touching the task worker: the task events it publishes ({@link sink}),
 * the runs it follows ({@link runner}) and the catalog workers it keeps ({@link worker}).
 */
export class DispatchMetrics {
  readonly #i: Instruments<typeof INSTRUMENTS>;
  readonly #slots = new Map<string, number>();

  constructor(meter: Meter, launchGate?: LaunchGate) {
    this.#i = createInstruments(meter, INSTRUMENTS);
    if (launchGate !== undefined) {
      this.#i.launchesInFlight.addCallback((result) => result.observe(launchGate.held, {}));
      this.#i.launchWaiters.addCallback((result) => result.observe(launchGate.waiting, {}));
    }
    this.#i.slots.addCallback((result) => {
      for (const [catalog, slots] of this.#slots) result.observe(slots, { catalog });
    });
  }

  /** `sink`, recording each task event it is given before passing it on. */
  sink(inner: DispatchSink): DispatchSink {
    return {
      taskEvent: (event) => {
        this.#taskEvent(event);
        return inner.taskEvent(event);
      },
      requestScan: (table, taskId) => inner.requestScan(table, taskId),
    };
  }

  /**
   * `runner`, timing each run and each task of a batch, counting re-attached ones and the runs
   * in flight (a batch is one). Every other member passes through unmeasured, bound to `inner`: a member left out here would be
   * missing only where metrics are on (the service, not most tests) — batches would run every
   * task alone, resident sessions would never start, runs would lose their recorded location.
   */
  runner(inner: SparkRunner): SparkRunner {
    const passed: Partial<SparkRunner> = {};
    for (const key of OPTIONAL_RUNNER_MEMBERS) {
      const member = inner[key]?.bind(inner);
      if (member !== undefined) Object.assign(passed, { [key]: member });
    }
    const runBatch = inner.runBatch?.bind(inner);
    return {
      ...passed,
      ...(runBatch === undefined
        ? {}
        : { runBatch: (request: BatchRunRequest) => this.#runBatch(runBatch, request) }),
      kind: inner.kind,
      isLaunched: (request) => inner.isLaunched(request),
      runName: (key) => inner.runName(key),
      run: (request) => this.#run(inner, request),
    };
  }

  /** `worker`, reporting its binding's slots (both lanes) while it runs (0 once it stopped). */
  worker(binding: Binding, inner: CatalogWorker): CatalogWorker {
    return {
      start: async () => {
        await inner.start();
        this.#slots.set(binding.catalog, concurrencyOf(binding));
      },
      close: async () => {
        // 0, not gone: the SDK would go on reporting a series' last value once it was seen.
        this.#slots.set(binding.catalog, 0);
        await inner.close();
      },
    };
  }

  /**
   * For `TaskWorkerOptions.onWait`: the task went back to wait — each re-check, though only a
   * wait's start is a task event (ADR 0041), so a long wait keeps the counter rising.
   */
  waited(kind: WaitKind, task: Task): void {
    const labels = taskLabels(task.table, task.type);
    if (kind === WaitKind.largeSlot) this.#i.largeSlotWaits.add(1, labels);
    else this.#i.quotaWaits.add(1, labels);
  }

  /** For `TaskWorkerOptions.onDispatched`: dequeue → run submitted. */
  dispatched(latencyMs: number, task: Task): void {
    this.#i.latency.record(latencyMs / 1000, taskLabels(task.table, task.type));
  }

  #taskEvent(event: TaskEvent): void {
    const labels = taskLabels(event.table, event.taskType);
    const errorKind = event.error === undefined ? {} : { error_kind: event.error.kind };
    switch (event.status) {
      case 'started':
        this.#i.started.add(1, labels);
        return;
      case 'succeeded':
        this.#i.finished.add(1, { ...labels, outcome: FinishedOutcome.succeeded });
        if (event.before !== undefined && event.after !== undefined) {
          this.#benefit(labels, event.before, event.after);
        }
        return;
      case 'failed':
        this.#i.finished.add(1, { ...labels, ...errorKind, outcome: FinishedOutcome.failed });
        return;
      case 'retrying':
        this.#i.finished.add(1, { ...labels, ...errorKind, outcome: FinishedOutcome.retried });
        return;
      // A wait's start only (ADR 0041): its re-checks are counted by `waited`. With an error, a
      // runner error before the start put the task back. Or the planner's statuses, or none
      // the dispatcher sends: nothing to count here.
      case 'updated':
      case 'planned':
      case 'queued':
      case 'superseded':
      case 'skipped':
      case 'cancelled':
        return;
    }
  }

  #benefit(labels: TaskLabels, before: HealthFigures, after: HealthFigures): void {
    const dataFiles = change(before.dataFiles, after.dataFiles);
    this.#i.dataFilesRemoved.add(dataFiles.removed, labels);
    this.#i.dataFilesAdded.add(dataFiles.added, labels);
    this.#i.deleteFilesRemoved.add(change(before.deleteFiles, after.deleteFiles).removed, labels);
    this.#i.snapshotsExpired.add(change(before.snapshots, after.snapshots).removed, labels);
  }

  /**
   * A batch or resident session (or a job following one after a restart): one slot in use
   * while it goes on — one application, held by the worker slot of the job that leads or
   * follows it — and, for each task whose end it returns (those appended to a resident session
   * too), a succeeded task's own run time from its result (a failed one's carries none), a
   * re-attach, and what a succeeded one rewrote, as for a single run.
   */
  async #runBatch(
    runBatch: NonNullable<SparkRunner['runBatch']>,
    request: BatchRunRequest,
  ): Promise<BatchOutcome> {
    const tasks = new Map(request.tasks.map((t) => [t.taskRun, t.task]));
    const { resident } = request;
    const counted: BatchRunRequest =
      resident === undefined
        ? request
        : {
            ...request,
            resident: {
              ...resident,
              onPoll: async () => {
                const appended = await resident.onPoll();
                for (const t of appended) tasks.set(t.taskRun, t.task);
                return appended;
              },
            },
          };
    const inUse = { catalog: request.binding.catalog };
    this.#i.slotsInUse.add(1, inUse);
    try {
      const outcome = await runBatch(counted);
      for (const [taskRun, end] of outcome.ends) {
        const task = tasks.get(taskRun);
        if (task === undefined) continue;
        const labels = taskLabels(task.table, task.type);
        if (outcome.reattached) this.#i.reattached.add(1, labels);
        else {
          const ms = endFigures(end)?.durationMs;
          if (ms !== undefined)
            this.#i.duration.record(ms / 1000, {
              ...labels,
              outcome: end.ok ? FinishedOutcome.succeeded : FinishedOutcome.failed,
            });
        }
        if (end.ok) this.#rewritten(task, labels);
      }
      return outcome;
    } finally {
      this.#i.slotsInUse.add(-1, inUse);
    }
  }

  #rewritten(task: Task, labels: TaskLabels): void {
    this.#i.rewrittenBytes.add(task.state.bytesToRewrite, labels);
    this.#i.rewrittenFiles.add(task.state.filesToRewrite, labels);
  }

  async #run(inner: SparkRunner, request: RunRequest): Promise<RunOutcome> {
    const { task } = request;
    const labels = taskLabels(task.table, task.type);
    const inUse = { catalog: task.table.catalog };
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    this.#i.slotsInUse.add(1, inUse);
    try {
      const outcome = await inner.run(request);
      if (outcome.reattached) {
        // Only the part after the restart was followed: its duration would mislead.
        this.#i.reattached.add(1, labels);
      } else {
        const ended = outcome.ok ? FinishedOutcome.succeeded : FinishedOutcome.failed;
        this.#i.duration.record(seconds(), { ...labels, outcome: ended });
      }
      if (outcome.ok) this.#rewritten(task, labels);
      return outcome;
    } catch (error) {
      this.#i.duration.record(seconds(), { ...labels, outcome: FinishedOutcome.failed });
      throw error;
    } finally {
      this.#i.slotsInUse.add(-1, inUse);
    }
  }
}
