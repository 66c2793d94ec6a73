import type { Attributes, Counter, Histogram, Meter, UpDownCounter } from '@opentelemetry/api';
import type { Binding, HealthFigures, TableId, Task, TaskEvent } from '@icepack/types';
import type { RunOutcome, RunRequest, SparkRunner } from '../runners/spark-runner.ts';
import type { CatalogWorker } from './binding-registry.ts';
import type { DispatchSink } from './task-events.ts';

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

const taskLabels = (table: TableId, type: Task['type']): Attributes => ({
  catalog: table.catalog,
  task_type: type,
});

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
  readonly #started: Counter;
  readonly #finished: Counter;
  readonly #quotaWaits: Counter;
  readonly #duration: Histogram;
  readonly #latency: Histogram;
  readonly #reattached: Counter;
  readonly #rewrittenBytes: Counter;
  readonly #rewrittenFiles: Counter;
  readonly #dataFilesRemoved: Counter;
  readonly #dataFilesAdded: Counter;
  readonly #deleteFilesRemoved: Counter;
  readonly #snapshotsExpired: Counter;
  readonly #slotsInUse: UpDownCounter;
  readonly #slots = new Map<string, number>();

  constructor(meter: Meter) {
    this.#started = meter.createCounter('icepack.dispatcher.tasks.started', {
      description: 'Task runs launched (one per attempt)',
    });
    this.#finished = meter.createCounter('icepack.dispatcher.tasks.finished', {
      description: 'Task runs ended, by outcome (succeeded, failed, retried) and error kind',
    });
    this.#quotaWaits = meter.createCounter('icepack.dispatcher.quota_waits', {
      description: 'Times a task was put back to wait for quota (no room, or claimed)',
    });
    this.#duration = meter.createHistogram('icepack.dispatcher.task.duration.seconds', {
      description: 'Time from launching a run to its end (re-attached runs not included)',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    this.#latency = meter.createHistogram('icepack.dispatcher.dispatch.latency.seconds', {
      description: 'Time from taking a task off the queue to its run being submitted',
      unit: 's',
      advice: { explicitBucketBoundaries: LATENCY_BUCKETS },
    });
    this.#reattached = meter.createCounter('icepack.dispatcher.runs.reattached', {
      description: 'Runs followed to their end without launching them (started before a restart)',
    });
    this.#rewrittenBytes = meter.createCounter('icepack.dispatcher.rewritten.bytes', {
      description: 'Bytes of data and delete files the succeeded tasks rewrote (as planned)',
      unit: 'By',
    });
    this.#rewrittenFiles = meter.createCounter('icepack.dispatcher.rewritten.files', {
      description: 'Data and delete files the succeeded tasks rewrote (as planned)',
    });
    this.#dataFilesRemoved = meter.createCounter('icepack.dispatcher.data_files.removed', {
      description: 'Net drop in data files across succeeded tasks (table figures before/after)',
    });
    this.#dataFilesAdded = meter.createCounter('icepack.dispatcher.data_files.added', {
      description: 'Net rise in data files across succeeded tasks (table figures before/after)',
    });
    this.#deleteFilesRemoved = meter.createCounter('icepack.dispatcher.delete_files.removed', {
      description: 'Net drop in delete files across succeeded tasks',
    });
    this.#snapshotsExpired = meter.createCounter('icepack.dispatcher.snapshots.expired', {
      description: 'Net drop in snapshots across succeeded tasks',
    });
    this.#slotsInUse = meter.createUpDownCounter('icepack.dispatcher.slots.in_use', {
      description:
        'Runs this dispatcher follows now, per catalog (sum over replicas: slots in use)',
    });
    meter
      .createObservableGauge('icepack.dispatcher.slots', {
        description: "Slots of the catalog's resource group (runs at once, all dispatchers)",
      })
      .addCallback((result) => {
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

  /** `runner`, timing each run, counting re-attached ones and the runs in flight. */
  runner(inner: SparkRunner): SparkRunner {
    return {
      kind: inner.kind,
      isLaunched: (request) => inner.isLaunched(request),
      runName: (key) => inner.runName(key),
      run: (request) => this.#run(inner, request),
    };
  }

  /** `worker`, reporting its binding's slots while it runs (0 once it stopped). */
  worker(binding: Binding, inner: CatalogWorker): CatalogWorker {
    return {
      start: async () => {
        await inner.start();
        this.#slots.set(binding.catalog, binding.slots);
      },
      close: async () => {
        // 0, not gone: the SDK would go on reporting a series' last value once it was seen.
        this.#slots.set(binding.catalog, 0);
        await inner.close();
      },
    };
  }

  /** For `TaskWorkerOptions.onDispatched`: dequeue → run submitted. */
  dispatched(latencyMs: number, task: Task): void {
    this.#latency.record(latencyMs / 1000, taskLabels(task.table, task.type));
  }

  #taskEvent(event: TaskEvent): void {
    const labels = taskLabels(event.table, event.taskType);
    const errorKind = event.error === undefined ? {} : { error_kind: event.error.kind };
    switch (event.status) {
      case 'started':
        this.#started.add(1, labels);
        return;
      case 'succeeded':
        this.#finished.add(1, { ...labels, outcome: FinishedOutcome.succeeded });
        if (event.before !== undefined && event.after !== undefined) {
          this.#benefit(labels, event.before, event.after);
        }
        return;
      case 'failed':
        this.#finished.add(1, { ...labels, ...errorKind, outcome: FinishedOutcome.failed });
        return;
      case 'retrying':
        this.#finished.add(1, { ...labels, ...errorKind, outcome: FinishedOutcome.retried });
        return;
      case 'updated':
        // The task goes back to wait for quota — or, with an error, because the quota could
        // not be read (a runner error before the start): not a quota wait.
        if (event.error === undefined) this.#quotaWaits.add(1, labels);
        return;
      // The planner's statuses, or none the dispatcher sends: nothing to count here.
      case 'planned':
      case 'queued':
      case 'superseded':
      case 'skipped':
      case 'cancelled':
        return;
    }
  }

  #benefit(labels: Attributes, before: HealthFigures, after: HealthFigures): void {
    const dataFiles = change(before.dataFiles, after.dataFiles);
    this.#dataFilesRemoved.add(dataFiles.removed, labels);
    this.#dataFilesAdded.add(dataFiles.added, labels);
    this.#deleteFilesRemoved.add(change(before.deleteFiles, after.deleteFiles).removed, labels);
    this.#snapshotsExpired.add(change(before.snapshots, after.snapshots).removed, labels);
  }

  async #run(inner: SparkRunner, request: RunRequest): Promise<RunOutcome> {
    const { task } = request;
    const labels = taskLabels(task.table, task.type);
    const inUse = { catalog: task.table.catalog };
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    this.#slotsInUse.add(1, inUse);
    try {
      const outcome = await inner.run(request);
      if (outcome.reattached) {
        // Only the part after the restart was followed: its duration would mislead.
        this.#reattached.add(1, labels);
      } else {
        const ended = outcome.ok ? FinishedOutcome.succeeded : FinishedOutcome.failed;
        this.#duration.record(seconds(), { ...labels, outcome: ended });
      }
      if (outcome.ok) {
        this.#rewrittenBytes.add(task.state.bytesToRewrite, labels);
        this.#rewrittenFiles.add(task.state.filesToRewrite, labels);
      }
      return outcome;
    } catch (error) {
      this.#duration.record(seconds(), { ...labels, outcome: FinishedOutcome.failed });
      throw error;
    } finally {
      this.#slotsInUse.add(-1, inUse);
    }
  }
}
