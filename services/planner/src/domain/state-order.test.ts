import { describe, expect, it } from 'vitest';
import { compareStates } from './state-order.ts';
import { tableState } from './state-fixtures.ts';

const base = tableState({}, { lastSequenceNumber: '42', scannedAt: '2026-01-01T12:00:00.000Z' });

describe('compareStates', () => {
  it.each([
    ['no state seen yet', undefined, base, 'newer'],
    ['identical (redelivered)', base, { ...base }, 'same'],
    [
      'higher sequence number',
      base,
      { ...base, lastSequenceNumber: '43', scannedAt: '2026-01-01T11:00:00.000Z' },
      'newer',
    ],
    [
      'lower sequence number',
      base,
      { ...base, lastSequenceNumber: '41', scannedAt: '2026-01-01T13:00:00.000Z' },
      'older',
    ],
    [
      'same sequence, later scan of new metadata',
      base,
      { ...base, scannedAt: '2026-01-01T12:05:00.000Z', metadataLocation: 's3://x/00043.json' },
      'newer',
    ],
    [
      'same sequence, earlier scan',
      base,
      { ...base, scannedAt: '2026-01-01T11:55:00.000Z', metadataLocation: 's3://x/00041.json' },
      'older',
    ],
    [
      're-created table (new uuid, lower sequence)',
      base,
      { ...base, tableUuid: 'other', lastSequenceNumber: '1' },
      'newer',
    ],
  ] as const)('%s → %s', (_name, latest, incoming, expected) => {
    expect(compareStates(latest, incoming)).toBe(expected);
  });

  it('compares 64-bit sequence numbers exactly', () => {
    const big = { ...base, lastSequenceNumber: '9007199254740993' };
    expect(compareStates(big, { ...base, lastSequenceNumber: '9007199254740992' })).toBe('older');
    expect(compareStates(big, { ...base, lastSequenceNumber: '9007199254740994' })).toBe('newer');
  });
});
