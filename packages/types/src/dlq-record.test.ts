import { describe, expect, it } from 'vitest';
import { dlqKey, dlqRecordFrom, dlqRecordSchema } from './dlq-record.ts';

describe('dlqRecordFrom', () => {
  it('keeps the original bytes, key and headers', () => {
    const original = Buffer.from([0xff, 0x00, 0x7b]);
    const record = dlqRecordFrom(
      {
        topic: 'icepack.commits',
        partition: 3,
        offset: '9007199254740993',
        key: Buffer.from('c/n/t'),
        value: original,
        headers: {
          traceparent: Buffer.from('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'),
          multi: ['a', Buffer.from('b')],
          none: undefined,
        },
      },
      'invalid CommitObserved payload: payload.table: Required',
      'metadata-scanner',
      new Date('2026-01-01T00:00:00Z'),
    );
    expect(dlqRecordSchema.parse(record)).toEqual(record);
    expect(Buffer.from(record.value, 'base64')).toEqual(original);
    expect(record).toMatchObject({
      key: 'c/n/t',
      headers: {
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        multi: 'a,b',
      },
      failedAt: '2026-01-01T00:00:00.000Z',
    });
    expect(dlqKey(record)).toBe('c/n/t');
  });

  it('handles a message without key or value', () => {
    const record = dlqRecordFrom(
      { topic: 't', partition: 0, offset: '5', key: null, value: null },
      'empty',
      'g',
    );
    expect(dlqRecordSchema.parse(record)).toMatchObject({ key: null, value: '', headers: {} });
    expect(dlqKey(record)).toBe('t/0/5');
  });
});

describe('dlqRecordSchema', () => {
  const valid = {
    sourceTopic: 'icepack.commits',
    partition: 0,
    offset: '12',
    key: null,
    value: 'e30=',
    headers: {},
    reason: 'bad',
    failedAt: '2026-01-01T00:00:00Z',
    consumerGroup: 'g',
  };
  it.each([
    [{ offset: 12 }, 'offset'],
    [{ partition: -1 }, 'partition'],
    [{ value: 'not base64!' }, 'value'],
    [{ reason: '' }, 'reason'],
  ])('rejects %j at %s', (patch, path) => {
    expect(dlqRecordSchema.parse(valid)).toEqual(valid);
    expect(dlqRecordSchema.safeParse({ ...valid, ...patch }).error?.issues[0]?.path).toEqual([
      path,
    ]);
  });
});
