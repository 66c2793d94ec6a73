import { createEnvelope, MessageType, serializeEnvelope } from '@icepack/types';
import type { TaskEvent } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { ProgressLines } from './progress-lines.ts';
import { taskEventLine } from './progress-follower.ts';
import { sampleSessionTail } from './progress-samples.ts';

const table = { catalog: 'lake', namespace: ['demo'], name: 'events' };
const bytes = (type: MessageType, payload: unknown) =>
  Buffer.from(serializeEnvelope(createEnvelope(type, 'lake/demo/events', payload as never)));

const planned: TaskEvent = {
  taskId: 'merge/lake/demo/events',
  table,
  taskType: 'merge',
  status: 'planned',
  at: '2026-12-05T00:00:00.000Z',
  reason: '60 small files > 5',
};

describe('taskEventLine: what ./dev follow prints for a message on icepack.task-events', () => {
  it('reads a task event and a resident session idle tail from their bytes', () => {
    const lines = new ProgressLines();
    expect(taskEventLine(lines, bytes(MessageType.TaskPlanned, planned))).toBe(
      'planned merge lake.demo.events — 60 small files > 5',
    );
    expect(taskEventLine(lines, bytes(MessageType.ResidentSessionEnded, sampleSessionTail))).toBe(
      'idle    session of merge lake.demo.events closed after 60 s idle (120.284 core-s held)',
    );
  });

  it('skips what happened before --since, and says when a message cannot be read', () => {
    const lines = new ProgressLines();
    const since = new Date('2026-12-05T00:00:30.000Z');
    expect(taskEventLine(lines, bytes(MessageType.TaskPlanned, planned), since)).toBeUndefined();
    expect(
      taskEventLine(lines, bytes(MessageType.ResidentSessionEnded, sampleSessionTail), since),
    ).toMatch(/^idle /);
    expect(taskEventLine(lines, null)).toBeUndefined();
    expect(taskEventLine(lines, Buffer.from('{"type":"Nope"}'))).toMatch(
      /^\(unreadable task event: /,
    );
  });
});
