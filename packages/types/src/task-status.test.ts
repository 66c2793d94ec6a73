import { describe, expect, it } from 'vitest';
import {
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
  ] as const)('allows %s → %s', (from, to) => {
    expect(() => assertTransition(from, to)).not.toThrow();
  });

  it.each([
    [null, 'queued'],
    ['planned', 'started'],
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
