import { describe, expect, it } from 'vitest';
import { envelopeSchema } from './envelope.ts';
import { commitEventSchema } from './commit-event.ts';
import { MessageType, MessageTypes } from './message-types.ts';
import {
  createEnvelope,
  parseEnvelope,
  parseEnvelopeOf,
  parseMessage,
  serializeEnvelope,
} from './messages.ts';
import { Topics } from './topics.ts';
import { ValidationError } from './validation-error.ts';

const table = { catalog: 'prod', namespace: ['sales'], name: 'orders' };

function errorOf(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error('expected a ValidationError');
}

describe('createEnvelope', () => {
  it('fills id, version and time, and validates the payload', () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    const envelope = createEnvelope(
      MessageType.CommitObserved,
      'prod/sales/orders',
      { table, snapshotId: 12 },
      { occurredAt: at },
    );
    expect(envelope).toMatchObject({
      type: 'CommitObserved',
      version: MessageTypes.CommitObserved.version,
      occurredAt: '2026-01-02T03:04:05.678Z',
      key: 'prod/sales/orders',
      payload: { table, snapshotId: '12' },
    });
    expect(envelope.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses an invalid payload, naming the field', () => {
    const error = errorOf(() =>
      createEnvelope(MessageType.CommitObserved, 'k', { table: { ...table, namespace: [''] } }),
    );
    expect(error.issues.map((i) => i.path)).toEqual(['payload.table.namespace[0]']);
  });
});

describe('parseMessage', () => {
  it('round-trips with an exact 64-bit snapshot id', () => {
    const envelope = createEnvelope(MessageType.CommitObserved, 'prod/sales/orders', {
      table,
      snapshotId: '6716213459318430795',
      operation: 'append',
    });
    const text = serializeEnvelope(envelope);
    expect(text).toContain('"snapshotId":"6716213459318430795"');
    expect(parseMessage(Buffer.from(text))).toEqual(envelope);
  });

  it('keeps an unquoted 64-bit id from a foreign writer exact', () => {
    const text = `{"type":"CommitObserved","version":1,"id":"0b7f2b9c-8a43-4a8e-9d0b-2a4c8f3f1e11","occurredAt":"2026-01-01T00:00:00Z","key":"prod/sales/orders","payload":{"table":${JSON.stringify(table)},"snapshotId":-6716213459318430795,"writer":"flink"}}`;
    const parsed = parseEnvelopeOf(MessageType.CommitObserved, parseMessage(text));
    expect(parsed.payload.snapshotId).toBe('-6716213459318430795');
    expect(parsed.payload).not.toHaveProperty('writer');
  });

  it.each([
    ['not JSON', '{', ''],
    ['no type', '{"version":1}', 'type'],
    [
      'unknown type',
      '{"type":"Nope","version":1,"id":"0b7f2b9c-8a43-4a8e-9d0b-2a4c8f3f1e11","occurredAt":"2026-01-01T00:00:00Z","key":"k","payload":{}}',
      'type',
    ],
    [
      'future version',
      '{"type":"ScanTable","version":2,"id":"0b7f2b9c-8a43-4a8e-9d0b-2a4c8f3f1e11","occurredAt":"2026-01-01T00:00:00Z","key":"k","payload":{}}',
      'version',
    ],
    [
      'bad id',
      '{"type":"ScanTable","version":1,"id":"x","occurredAt":"2026-01-01T00:00:00Z","key":"k","payload":{}}',
      'id',
    ],
    [
      'bad time',
      '{"type":"ScanTable","version":1,"id":"0b7f2b9c-8a43-4a8e-9d0b-2a4c8f3f1e11","occurredAt":"yesterday","key":"k","payload":{}}',
      'occurredAt',
    ],
    [
      'bad payload',
      '{"type":"ScanTable","version":1,"id":"0b7f2b9c-8a43-4a8e-9d0b-2a4c8f3f1e11","occurredAt":"2026-01-01T00:00:00Z","key":"k","payload":{"table":{"catalog":"c","namespace":["n"],"name":"t"},"reason":"whim","requestedAt":"2026-01-01T00:00:00Z"}}',
      'payload.reason',
    ],
  ])('rejects %s, naming %j', (_label, text, path) => {
    const error = errorOf(() => parseMessage(text));
    expect(error.issues[0]?.path).toBe(path);
  });

  it('rejects a type the consumer does not expect', () => {
    const envelope = createEnvelope(MessageType.ScanTable, 'k', {
      table,
      reason: 'manual',
      requestedAt: '2026-01-01T00:00:00Z',
    });
    expect(parseEnvelope(envelope, [MessageType.ScanTable]).type).toBe('ScanTable');
    expect(errorOf(() => parseEnvelope(envelope, [MessageType.CommitObserved])).message).toContain(
      'unknown message type',
    );
  });
});

describe('MessageTypes', () => {
  it('names events in the past tense and commands in the imperative, each on a known topic', () => {
    const topics = new Set<string>(Object.values(Topics));
    for (const [name, spec] of Object.entries(MessageTypes)) {
      expect(topics.has(spec.topic)).toBe(true);
      expect(spec.accepts).toContain(spec.version);
      if (spec.kind === 'event') expect(name).toMatch(/ed$/);
    }
  });
});

describe('envelopeSchema', () => {
  it('types the payload', () => {
    const schema = envelopeSchema(commitEventSchema);
    const result = schema.safeParse({
      type: 'CommitObserved',
      version: 1,
      id: '0b7f2b9c-8a43-4a8e-9d0b-2a4c8f3f1e11',
      occurredAt: '2026-01-01T00:00:00Z',
      key: 'k',
      payload: { table: { catalog: 'c', namespace: [], name: 't' } },
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['payload', 'table', 'namespace']);
  });
});
