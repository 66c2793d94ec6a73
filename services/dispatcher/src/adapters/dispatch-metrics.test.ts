import { InMemoryMetrics } from '@icepack/runtime/testing';
import { sampleBinding, sampleMergeTask, type RunLocation, type TaskEvent } from '@icepack/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LARGE_SLOTS_BUSY } from '../domain/lanes.ts';
import { sizeJob } from '../domain/sizing.ts';
import type {
  BatchOutcome,
  BatchRunRequest,
  BatchTask,
  RunOutcome,
  RunRequest,
  SparkRunner,
} from '../runners/spark-runner.ts';
import { LaunchGate } from '../domain/launch-gate.ts';
import { WaitKind } from '../domain/waits.ts';
import { DispatchMetrics } from './dispatch-metrics.ts';
import { InMemoryDispatchSink } from './task-events.ts';

const task = sampleMergeTask(); // catalog `prod`, 403 MiB and 92 files to rewrite
const binding = sampleBinding();
const labels = { catalog: 'prod', task_type: 'merge' };
const figures = (dataFiles: number, deleteFiles: number, snapshots: number) => ({
  dataFiles,
  smallFiles: 0,
  deleteFiles,
  snapshots,
  bytes: 1,
});
const event = (status: TaskEvent['status'], extra: Partial<TaskEvent> = {}): TaskEvent => ({
  taskId: task.id,
  table: task.table,
  taskType: task.type,
  status,
  at: '2026-01-01T12:00:00.000Z',
  ...extra,
});
const request: RunRequest = {
  taskRun: `${task.id}@1`,
  task,
  attempt: 1,
  binding,
  size: sizeJob({ bytes: 1, files: 2, minInputFiles: 2, spark: binding.spark, room: {} }).size,
  catalog: { name: 'prod', uri: 'http://catalog' },
  timeoutMs: 60_000,
};

/** A batch of two merges of other tables (the leader's task and a member's). */
const second = sampleMergeTask({ id: 'merge/prod/db/other' });
const batch: BatchRunRequest = {
  batchRun: request.taskRun,
  attempt: 1,
  tasks: [
    { taskRun: request.taskRun, task },
    { taskRun: `${second.id}@1`, task: second },
  ],
  binding,
  size: request.size,
  catalog: request.catalog,
  timeoutMs: 60_000,
};

/** A runner whose run ends when the test says how. */
function heldRunner() {
  let end: (outcome: RunOutcome | Error) => void = () => {};
  const runner: SparkRunner = {
    kind: 'test',
    isLaunched: () => Promise.resolve(false),
    runName: () => 'run-1',
    run: () =>
      new Promise((resolve, reject) => {
        end = (outcome) => (outcome instanceof Error ? reject(outcome) : resolve(outcome));
      }),
  };
  return { runner, end: (outcome: RunOutcome | Error) => end(outcome) };
}

let metrics: InMemoryMetrics;
let dispatch: DispatchMetrics;
beforeEach(() => {
  metrics = new InMemoryMetrics();
  dispatch = new DispatchMetrics(metrics.meter);
});
afterEach(() => metrics.shutdown());

describe('dispatcher metrics from task events', () => {
  it('count starts, ends by outcome and error kind, quota and large-slot waits, and pass every event on', async () => {
    const inner = new InMemoryDispatchSink();
    const sink = dispatch.sink(inner);
    const oom = { kind: 'oom', message: 'executor lost', retryable: true };
    await sink.taskEvent(event('updated', { reason: 'waiting for quota: …' }));
    await sink.taskEvent(event('updated', { reason: LARGE_SLOTS_BUSY }));
    const unreachable = { kind: 'runner', message: 'connect ECONNREFUSED', retryable: true };
    await sink.taskEvent(event('updated', { reason: 'runner error 1 of 3', error: unreachable }));
    await sink.taskEvent(event('started', { attempt: 1 }));
    await sink.taskEvent(event('retrying', { attempt: 1, error: oom }));
    await sink.taskEvent(event('started', { attempt: 2 }));
    await sink.taskEvent(event('failed', { attempt: 2, error: { ...oom, retryable: false } }));

    expect(inner.events.map((e) => e.status)).toEqual([
      'updated',
      'updated',
      'updated',
      'started',
      'retrying',
      'started',
      'failed',
    ]);
    // Waits are counted by `waited` (each re-check), not by their start's event (ADR 0041).
    expect(await metrics.value('icepack.dispatcher.quota_waits', labels)).toBe(0);
    expect(await metrics.value('icepack.dispatcher.large_slot_waits', labels)).toBe(0);
    expect(await metrics.value('icepack.dispatcher.tasks.started', labels)).toBe(2);
    const finished = 'icepack.dispatcher.tasks.finished';
    expect(
      await metrics.value(finished, { ...labels, outcome: 'retried', error_kind: 'oom' }),
    ).toBe(1);
    expect(await metrics.value(finished, { ...labels, outcome: 'failed', error_kind: 'oom' })).toBe(
      1,
    );
    expect(await metrics.value(finished, { outcome: 'succeeded' })).toBe(0);
  });

  it('count every re-check of a wait, quota and large-slot apart, though only its start is an event', async () => {
    for (let i = 0; i < 3; i += 1) dispatch.waited(WaitKind.quota, task);
    dispatch.waited(WaitKind.largeSlot, task);
    expect(await metrics.value('icepack.dispatcher.quota_waits', labels)).toBe(3);
    expect(await metrics.value('icepack.dispatcher.large_slot_waits', labels)).toBe(1);
  });

  it('count what a succeeded task changed, from its before and after figures', async () => {
    const sink = dispatch.sink(new InMemoryDispatchSink());
    await sink.taskEvent(
      event('succeeded', { before: figures(124, 6, 63), after: figures(1, 0, 64) }),
    );
    expect(
      await metrics.value('icepack.dispatcher.tasks.finished', { ...labels, outcome: 'succeeded' }),
    ).toBe(1);
    expect(await metrics.value('icepack.dispatcher.data_files.removed', labels)).toBe(123);
    expect(await metrics.value('icepack.dispatcher.data_files.added', labels)).toBe(0);
    expect(await metrics.value('icepack.dispatcher.delete_files.removed', labels)).toBe(6);
    // A merge adds a snapshot: nothing expired.
    expect(await metrics.value('icepack.dispatcher.snapshots.expired', labels)).toBe(0);

    await sink.taskEvent(
      event('succeeded', { before: figures(1, 0, 64), after: figures(1, 0, 3) }),
    );
    expect(await metrics.value('icepack.dispatcher.snapshots.expired', labels)).toBe(61);
  });
});

/** A runner with every member `SparkRunner` has, optional ones too, each noting its call. */
class EveryMember implements Required<SparkRunner> {
  readonly kind = 'every';
  readonly calls: string[] = [];
  run(): Promise<RunOutcome> {
    return this.#call('run', { ok: true, reattached: false });
  }
  isLaunched(): Promise<boolean> {
    return this.#call('isLaunched', true);
  }
  runName(): string {
    this.calls.push('runName');
    return 'run-1';
  }
  location(): RunLocation {
    this.calls.push('location');
    return { runner: this.kind, runId: 'run-1', logs: [] };
  }
  runBatch(): Promise<BatchOutcome> {
    return this.#call('runBatch', { reattached: false, ends: new Map() });
  }
  batchName(): string {
    this.calls.push('batchName');
    return 'batch-1';
  }
  batchLocation(): RunLocation {
    this.calls.push('batchLocation');
    return { runner: this.kind, runId: 'batch-1', logs: [] };
  }
  appendToBatch(): Promise<boolean> {
    return this.#call('appendToBatch', true);
  }
  #call<T>(member: string, value: T): Promise<T> {
    this.calls.push(member);
    return Promise.resolve(value);
  }
}

describe('dispatcher metrics from runs', () => {
  it('pass every member of the runner on, bound to it: batches, resident sessions, run locations', async () => {
    const inner = new EveryMember();
    const wrapped = dispatch.runner(inner) as unknown as Record<string, unknown>;
    const members = Object.getOwnPropertyNames(EveryMember.prototype).filter(
      (name) => name !== 'constructor',
    );
    for (const name of members) {
      const member = wrapped[name];
      expect(member, name).toBeTypeOf('function');
      await (member as (...args: unknown[]) => unknown)(name === 'runBatch' ? batch : request);
    }
    expect(inner.calls.sort()).toEqual([...members].sort());
    expect(wrapped.kind).toBe('every');
  });

  it('hold a slot while a run goes on, then time it and count what it rewrote', async () => {
    const { runner, end } = heldRunner();
    const running = dispatch.runner(runner).run(request);
    expect(await metrics.value('icepack.dispatcher.slots.in_use', { catalog: 'prod' })).toBe(1);
    end({ ok: true, reattached: false });
    await running;
    expect(await metrics.value('icepack.dispatcher.slots.in_use', { catalog: 'prod' })).toBe(0);
    const duration = await metrics.total('icepack.dispatcher.task.duration.seconds', {
      ...labels,
      outcome: 'succeeded',
    });
    expect(duration.count).toBe(1);
    expect(await metrics.value('icepack.dispatcher.rewritten.bytes', labels)).toBe(
      task.state.bytesToRewrite,
    );
    expect(await metrics.value('icepack.dispatcher.rewritten.files', labels)).toBe(92);
  });

  it('count a re-attached run without timing it, and time a failed or thrown one as failed', async () => {
    const attached = heldRunner();
    const following = dispatch.runner(attached.runner).run(request);
    attached.end({ ok: true, reattached: true });
    await following;
    expect(await metrics.value('icepack.dispatcher.runs.reattached', labels)).toBe(1);
    expect((await metrics.total('icepack.dispatcher.task.duration.seconds')).count).toBe(0);

    const failing = heldRunner();
    const failed = dispatch.runner(failing.runner).run(request);
    failing.end({
      ok: false,
      reattached: false,
      error: { kind: 'io', message: 'x', retryable: true },
    });
    await failed;
    const broken = heldRunner();
    const thrown = dispatch.runner(broken.runner).run(request);
    broken.end(new Error('kube API down'));
    await expect(thrown).rejects.toThrow('kube API down');

    const failedRuns = await metrics.total('icepack.dispatcher.task.duration.seconds', {
      outcome: 'failed',
    });
    expect(failedRuns.count).toBe(2);
    expect(await metrics.value('icepack.dispatcher.slots.in_use')).toBe(0);
    // Only the succeeded run counts as rewritten.
    expect(await metrics.value('icepack.dispatcher.rewritten.files', labels)).toBe(92);
  });

  it('hold one slot while a batch goes on, then time and count each task it ended', async () => {
    let end: (outcome: BatchOutcome) => void = () => {};
    const runner: SparkRunner = {
      ...heldRunner().runner,
      runBatch: () => new Promise((resolve) => (end = resolve)),
    };
    const running = dispatch.runner(runner).runBatch!(batch);
    expect(await metrics.value('icepack.dispatcher.slots.in_use', { catalog: 'prod' })).toBe(1);
    end({
      reattached: false,
      ends: new Map([
        [batch.tasks[0]!.taskRun, { ok: true, figures: { durationMs: 4_000 } }],
        [
          batch.tasks[1]!.taskRun,
          { ok: false, error: { kind: 'io', message: 'x', retryable: true } },
        ],
      ]),
    });
    await running;
    expect(await metrics.value('icepack.dispatcher.slots.in_use', { catalog: 'prod' })).toBe(0);
    const timed = await metrics.total('icepack.dispatcher.task.duration.seconds', {
      ...labels,
      outcome: 'succeeded',
    });
    expect([timed.count, timed.sum]).toEqual([1, 4]);
    // The failed task has no result to time; only the succeeded one rewrote.
    expect((await metrics.total('icepack.dispatcher.task.duration.seconds')).count).toBe(1);
    expect(await metrics.value('icepack.dispatcher.rewritten.files', labels)).toBe(92);
  });

  it("count the tasks appended to a resident session, and a followed batch's as re-attached", async () => {
    const appended = sampleMergeTask({ id: 'merge/prod/db/appended' });
    const more: BatchTask = { taskRun: `${appended.id}@1`, task: appended };
    const runner: SparkRunner = {
      ...heldRunner().runner,
      runBatch: async (request) => {
        const added = await request.resident!.onPoll();
        return {
          reattached: false,
          ends: new Map(added.map((t) => [t.taskRun, { ok: true as const, figures: {} }])),
        };
      },
    };
    const noEnd = () => Promise.resolve();
    const resident = { idleSeconds: 60, maxTasks: 10, closeBy: 0, onEnd: noEnd };
    await dispatch.runner(runner).runBatch!({
      ...batch,
      resident: { ...resident, onPoll: () => Promise.resolve([more]) },
    });
    expect(await metrics.value('icepack.dispatcher.rewritten.files', labels)).toBe(92);

    const followed: SparkRunner = {
      ...heldRunner().runner,
      runBatch: (request) =>
        Promise.resolve({
          reattached: true,
          ends: new Map(request.tasks.map((t) => [t.taskRun, { ok: true as const }])),
        }),
    };
    await dispatch.runner(followed).runBatch!({ ...batch, tasks: [batch.tasks[1]!] });
    expect(await metrics.value('icepack.dispatcher.runs.reattached', labels)).toBe(1);
    expect((await metrics.total('icepack.dispatcher.task.duration.seconds')).count).toBe(0);
    expect(await metrics.value('icepack.dispatcher.slots.in_use', { catalog: 'prod' })).toBe(0);
  });

  it("report a catalog's slots (both lanes) while its worker runs", async () => {
    const worker = dispatch.worker(binding, { start: async () => {}, close: async () => {} });
    expect(await metrics.value('icepack.dispatcher.slots', { catalog: 'prod' })).toBe(0);
    await worker.start();
    // slots 2 + smallSlots 1
    expect(await metrics.value('icepack.dispatcher.slots', { catalog: 'prod' })).toBe(3);
    await worker.close();
    expect(await metrics.value('icepack.dispatcher.slots', { catalog: 'prod' })).toBe(0);
  });

  it('report the launch gate: launches in flight and workers waiting for a permit (ADR 0040)', async () => {
    const gate = new LaunchGate(1);
    new DispatchMetrics(metrics.meter, gate); // its gauges read the gate
    const held = gate.tryAcquire();
    const waiting = gate.acquire();
    expect(await metrics.value('icepack.dispatcher.launches.in_flight')).toBe(1);
    expect(await metrics.value('icepack.dispatcher.launches.waiting')).toBe(1);
    held?.release();
    (await waiting)?.release();
    expect(await metrics.value('icepack.dispatcher.launches.in_flight')).toBe(0);
    expect(await metrics.value('icepack.dispatcher.launches.waiting')).toBe(0);
  });
});
