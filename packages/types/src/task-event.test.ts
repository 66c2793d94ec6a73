import { describe, expect, it } from 'vitest';
import { MessageType, TaskEventTypes } from './message-types.ts';
import { createEnvelope, parseMessage, serializeEnvelope } from './messages.ts';
import { sampleTableId } from './samples.ts';
import { assertEventLifecycle, taskEventSchema, type TaskEvent } from './task-event.ts';
import { TaskStatus } from './task-status.ts';
import { ValidationError } from './validation-error.ts';

const event = {
  taskId: 'merge/prod/sales/orders',
  table: sampleTableId(),
  taskType: 'merge',
  status: 'succeeded',
  at: '2026-01-01T12:10:00.000Z',
  before: { dataFiles: 120, smallFiles: 80, deleteFiles: 12, snapshots: 60, bytes: 4_000 },
  after: { dataFiles: 41, smallFiles: 1, deleteFiles: 0, snapshots: 61, bytes: 3_990 },
  attempt: 1,
  runId: 'ip-merge-orders-3f9c2a1b7d4e-a1',
} as const;

describe('taskEventSchema', () => {
  it('accepts an event with figures', () => {
    expect(taskEventSchema.parse(event)).toEqual(event);
  });

  it('accepts a succeeded event with its cost and benefit, and one without (older events)', () => {
    const withLedger = {
      ...event,
      cost: {
        runMs: 42_000,
        coreSecondsRequested: 84,
        coreSecondsUsed: 61.5,
        bytesRead: 4_000,
        bytesWritten: 3_990,
        filesRewritten: 92,
      },
      benefit: {
        dataFilesRemoved: 79,
        smallFilesRemoved: 79,
        deleteFilesRemoved: 12,
        snapshotsRemoved: -1,
        bytesSaved: 10,
      },
    };
    expect(taskEventSchema.parse(withLedger)).toEqual(withLedger);
    expect(taskEventSchema.parse(event).cost).toBeUndefined();
  });

  it('accepts an event without a run id (the planner sends none)', () => {
    const planned = { ...event, status: 'planned', runId: undefined };
    expect(taskEventSchema.parse(planned).runId).toBeUndefined();
  });

  it.each([
    [{ status: 'done' }, 'status'],
    [{ taskType: 'vacuum' }, 'taskType'],
    [{ attempt: 0 }, 'attempt'],
    [{ runId: '' }, 'runId'],
    [{ after: { ...event.after, smallFiles: -1 } }, 'after.smallFiles'],
    [{ error: { kind: 'io', message: 'x' } }, 'error.retryable'],
    [{ factors: [{ factor: 'small-files', value: '80', points: 1 }] }, 'factors.0.value'],
    [{ cost: { runMs: 1, coreSecondsRequested: -1 } }, 'cost.coreSecondsRequested'],
    [{ cost: { runMs: 1, coreSecondsRequested: 1, bytesRead: 1.5 } }, 'cost.bytesRead'],
    [{ benefit: { dataFilesRemoved: 1, deleteFilesRemoved: 0 } }, 'benefit.snapshotsRemoved'],
  ])('rejects %j at %s', (patch, path) => {
    const result = taskEventSchema.safeParse({ ...event, ...patch });
    expect(result.error?.issues[0]?.path.join('.')).toBe(path);
  });
});

describe('task event message types', () => {
  it('has one message type per status, and the type must match the status', () => {
    expect(Object.keys(TaskEventTypes).sort()).toEqual(Object.values(TaskStatus).sort());
    const envelope = createEnvelope(TaskEventTypes.succeeded, 'prod/sales/orders', event);
    expect(parseMessage(serializeEnvelope(envelope)).type).toBe(MessageType.TaskSucceeded);
    expect(() =>
      createEnvelope(MessageType.TaskFailed, 'prod/sales/orders', event as never),
    ).toThrow(ValidationError);
  });
});

describe('assertEventLifecycle', () => {
  const table = sampleTableId();
  const event = (status: TaskEvent['status'], at: string, runId?: string): TaskEvent => ({
    taskId: 'merge/cat/db/t',
    table,
    taskType: 'merge',
    status,
    at,
    ...(runId === undefined ? {} : { runId }),
  });

  it('takes the events in the order they happened, not the order they arrived', () => {
    const arrived = [
      event('started', '2026-01-01T00:00:02.000Z', 'run-a1'),
      event('planned', '2026-01-01T00:00:01.000Z'),
      event('succeeded', '2026-01-01T00:00:03.000Z', 'run-a1'),
    ];
    expect(() => assertEventLifecycle(arrived)).not.toThrow();
  });

  it('names the refused move and lists the events', () => {
    const events = [
      event('planned', '2026-01-01T00:00:01.000Z'),
      event('succeeded', '2026-01-01T00:00:02.000Z', 'run-a1'),
    ];
    expect(() => assertEventLifecycle(events)).toThrow(
      /task cannot move from planned to succeeded.*; events: planned → succeeded \(run-a1\)/,
    );
  });
});
