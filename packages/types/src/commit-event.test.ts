import { describe, expect, it } from 'vitest';
import { commitEventSchema } from './commit-event.ts';
import { scanRequestSchema } from './scan-request.ts';

const table = { catalog: 'c', namespace: ['n'], name: 't' };

describe('commitEventSchema', () => {
  it.each([
    [{ table }, { table }],
    [
      { table, snapshotId: '6716213459318430795' },
      { table, snapshotId: '6716213459318430795' },
    ],
    [
      { table, snapshotId: 42 },
      { table, snapshotId: '42' },
    ],
    [
      {
        table,
        operation: 'replace',
        summary: { 'added-data-files': '3' },
        committedAt: '2026-01-01T10:00:00+02:00',
        metadataLocation: 's3://b/m.json',
        extra: true,
      },
      {
        table,
        operation: 'replace',
        summary: { 'added-data-files': '3' },
        committedAt: '2026-01-01T10:00:00+02:00',
        metadataLocation: 's3://b/m.json',
      },
    ],
  ])('accepts %j', (input, output) => {
    expect(commitEventSchema.parse(input)).toEqual(output);
  });

  it.each([
    [{}, 'table'],
    [{ table, snapshotId: 6716213459318431000 }, 'snapshotId'],
    [{ table, snapshotId: '12a' }, 'snapshotId'],
    [{ table, snapshotId: '9223372036854775808' }, 'snapshotId'],
    [{ table, operation: 'compact' }, 'operation'],
    [{ table, summary: { 'added-data-files': 3 } }, 'summary.added-data-files'],
    [{ table, committedAt: 'today' }, 'committedAt'],
  ])('rejects %j at %s', (input, path) => {
    const result = commitEventSchema.safeParse(input);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path.join('.')).toBe(path);
  });
});

describe('scanRequestSchema', () => {
  it('accepts a request with a cause', () => {
    const request = {
      table,
      reason: 'after-task',
      requestedAt: '2026-01-01T00:00:00.000Z',
      cause: { taskId: 'merge/c/n/t' },
    };
    expect(scanRequestSchema.parse(request)).toEqual(request);
  });

  it.each([
    [{ table, reason: 'whim', requestedAt: '2026-01-01T00:00:00Z' }, 'reason'],
    [{ table, reason: 'manual' }, 'requestedAt'],
    [
      { table, reason: 'commit', requestedAt: '2026-01-01T00:00:00Z', cause: { eventId: 'nope' } },
      'cause.eventId',
    ],
  ])('rejects %j at %s', (input, path) => {
    const result = scanRequestSchema.safeParse(input);
    expect(result.error?.issues[0]?.path.join('.')).toBe(path);
  });
});
