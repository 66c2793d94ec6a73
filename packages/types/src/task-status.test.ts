import { describe, expect, it } from 'vitest';
import {
  assertLifecycle,
  assertTransition,
  canTransition,
  InvalidTaskTransitionError,
  isTerminalStatus,
  TaskStatus,
  TaskTransitions,
} from './task-status.ts';

describe('TaskTransitions', () => {
  it.each([
    [null, 'planned'],
    ['planned', 'queued'],
    ['planned', 'superseded'],
    ['queued', 'updated'],
    ['updated', 'queued'],
    ['queued', 'started'],
    ['started', 'succeeded'],
    ['started', 'retrying'],
    ['retrying', 'started'],
    ['retrying', 'failed'],
    ['queued', 'cancelled'],
    // The dispatcher's: waiting for quota, then starting; a retry waiting for quota; a run
    // followed again after a runner error, ending without a new `started`.
    ['updated', 'started'],
    ['retrying', 'updated'],
    ['retrying', 'succeeded'],
    ['updated', 'failed'],
    // The planner's `planned` is published once the task is in the queue.
    ['planned', 'started'],
  ] as const)('allows %s → %s', (from, to) => {
    expect(() => assertTransition(from, to)).not.toThrow();
  });

  it.each([
    [null, 'queued'],
    ['planned', 'succeeded'],
    ['queued', 'succeeded'],
    ['updated', 'succeeded'],
    ['succeeded', 'started'],
    ['failed', 'retrying'],
    ['started', 'planned'],
    ['cancelled', 'queued'],
  ] as const)('rejects %s → %s with a typed error', (from, to) => {
    expect(() => assertTransition(from, to)).toThrow(InvalidTaskTransitionError);
    try {
      assertTransition(from, to);
    } catch (error) {
      expect(error).toMatchObject({ name: 'InvalidTaskTransitionError', from, to });
    }
  });

  it('every status reaches a terminal status, and terminals go nowhere', () => {
    const terminals = Object.values(TaskStatus).filter(isTerminalStatus);
    expect(terminals.sort()).toEqual(['cancelled', 'failed', 'skipped', 'succeeded', 'superseded']);
    for (const from of Object.values(TaskStatus)) {
      const seen = new Set<TaskStatus>([from]);
      const queue = [from];
      while (queue.length > 0) {
        for (const next of TaskTransitions[queue.shift()!]) {
          if (!seen.has(next)) {
            seen.add(next);
            queue.push(next);
          }
        }
      }
      expect([...seen].some(isTerminalStatus)).toBe(true);
    }
    expect(canTransition('started', 'cancelled')).toBe(true);
  });
});

describe('assertLifecycle', () => {
  const accepted: TaskStatus[][] = [
    ['planned', 'updated', 'started', 'succeeded'],
    // Enqueued without the planner's event; a runner error, the same run followed again.
    ['updated', 'started', 'retrying', 'retrying', 'succeeded'],
    // At-least-once: a restarted dispatcher reports the run's start and end again.
    ['planned', 'started', 'started', 'succeeded', 'succeeded'],
    // Task ids repeat: the next merge of the table after this one ended.
    ['planned', 'started', 'failed', 'planned', 'superseded'],
    ['queued', 'started', 'succeeded', 'started', 'succeeded'],
  ];
  it.each(accepted.map((statuses) => [statuses.join(' → '), statuses]))(
    'accepts %s',
    (_, statuses) => {
      expect(() => assertLifecycle(statuses)).not.toThrow();
    },
  );

  const rejected: [TaskStatus[], TaskStatus, TaskStatus][] = [
    [['planned', 'started', 'updated'], 'started', 'updated'],
    [['planned', 'succeeded'], 'planned', 'succeeded'],
    // A new task of the id must start afresh, not continue the ended one.
    [['started', 'succeeded', 'retrying'], 'queued', 'retrying'],
    [['started', 'queued', 'succeeded'], 'started', 'queued'],
  ];
  it.each(rejected.map(([statuses, from, to]) => [statuses.join(' → '), from, to, statuses]))(
    'rejects %s at %s → %s',
    (_, from, to, statuses) => {
      expect(() => assertLifecycle(statuses)).toThrow(
        expect.objectContaining({ name: 'InvalidTaskTransitionError', from, to }),
      );
    },
  );
});
