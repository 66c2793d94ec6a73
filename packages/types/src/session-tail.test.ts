import { describe, expect, it } from 'vitest';
import { MessageType, TaskEventTypes } from './message-types.ts';
import { createEnvelope, parseMessage, serializeEnvelope } from './messages.ts';
import { sampleSessionTail } from './samples.ts';
import { parseSessionTail } from './session-tail.ts';
import { ValidationError } from './validation-error.ts';

const tail = sampleSessionTail();

function pathsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ValidationError) return error.issues.map((i) => i.path);
    throw error;
  }
  throw new Error('expected a ValidationError');
}

describe('ResidentSessionEnded (a resident session’s idle tail, ADR 0046)', () => {
  it('carries the leader’s task, run and table, the idle time and its cost', () => {
    expect(parseSessionTail(tail)).toEqual(tail);
    const text = serializeEnvelope(
      createEnvelope(MessageType.ResidentSessionEnded, 'prod/sales/orders', tail),
    );
    const envelope = parseMessage(text, [
      ...Object.values(TaskEventTypes),
      MessageType.ResidentSessionEnded,
    ]);
    expect(envelope).toMatchObject({ type: 'ResidentSessionEnded', payload: tail });
  });

  it('refuses a tail without its run, with a negative idle time or without a cost, naming the field', () => {
    expect(pathsOf(() => parseSessionTail({ ...tail, runId: undefined }))).toEqual(['runId']);
    expect(pathsOf(() => parseSessionTail({ ...tail, idleMs: -1 }))).toEqual(['idleMs']);
    expect(pathsOf(() => parseSessionTail({ ...tail, cost: undefined }))).toEqual(['cost']);
  });

  it('is an unknown type to a consumer that expects task events only (an older planner): dead-lettered, not a task event', () => {
    const text = serializeEnvelope(createEnvelope(MessageType.ResidentSessionEnded, 'k', tail));
    expect(() => parseMessage(text, Object.values(TaskEventTypes))).toThrow(
      /unknown message type "ResidentSessionEnded"/,
    );
  });
});
