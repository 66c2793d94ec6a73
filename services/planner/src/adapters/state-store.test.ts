import { describe, expect, it } from 'vitest';
import type { PartitionState } from '@icepack/types';
import { packPartitions, unpackPartitions } from './state-store.ts';

const day = (d: string, extra: Partial<PartitionState> = {}): PartitionState => ({
  specId: 1,
  partition: { region: 'eu', ts_day: d },
  dataFiles: 12,
  smallFiles: 8,
  deleteFiles: 0,
  bytes: 2048,
  smallFileBytes: 1024,
  lastSequenceNumber: '7',
  lastChangedAt: '2026-01-09T10:00:00.000Z',
  ...extra,
});

describe('packed partitions (the stored form of a state partition list)', () => {
  it('holds the keys once and gives back the same partitions, optional keys absent or present', () => {
    const partitions: PartitionState[] = [
      {
        specId: 0,
        partition: { region: null },
        dataFiles: 3,
        smallFiles: 3,
        deleteFiles: 0,
        bytes: 9,
      },
      day('2026-01-09'),
      day('2026-01-08', { deleteFiles: 2, deleteFileBytes: 300 }),
    ];
    const packed = packPartitions(partitions)!;
    expect(packed.keys).toEqual([
      'specId',
      'partition',
      'dataFiles',
      'smallFiles',
      'deleteFiles',
      'bytes',
      'smallFileBytes',
      'lastSequenceNumber',
      'lastChangedAt',
      'deleteFileBytes',
    ]);
    // Every row as long as the keys (the first partition had fewer).
    expect(packed.rows.map((r) => r.length)).toEqual([10, 10, 10]);
    const back = unpackPartitions(JSON.parse(JSON.stringify(packed)) as typeof packed);
    expect(back).toEqual(partitions);
    expect(back[0]).not.toHaveProperty('smallFileBytes');
    // A state's 100 listed partitions: under half the bytes.
    const hundred = Array.from({ length: 100 }, (_, i) => day(`2026-01-${i}`));
    const size = (x: unknown) => JSON.stringify(x).length;
    expect(size(packPartitions(hundred))).toBeLessThan(0.5 * size(hundred));
    expect(packPartitions([])).toEqual({ keys: [], rows: [] });
  });

  it('gives back partitions whose keys come in another order, or with keys left out', () => {
    const a = day('2026-01-09');
    const { specId, partition, ...rest } = day('2026-01-08', { deleteFileBytes: 5 });
    const reordered: PartitionState = { ...rest, partition, specId };
    const shorter = day('2026-01-07');
    delete shorter.lastChangedAt;
    const partitions = [a, reordered, shorter, day('2026-01-06')];
    const packed = packPartitions(partitions)!;
    expect(packed.rows.map((r) => r.length)).toEqual([10, 10, 10, 10]);
    expect(unpackPartitions(JSON.parse(JSON.stringify(packed)) as typeof packed)).toEqual(
      partitions,
    );
  });

  it('refuses a top-level null (a row could not tell it from an absent key)', () => {
    const odd = { ...day('2026-01-09'), lastChangedAt: null } as unknown as PartitionState;
    expect(packPartitions([day('2026-01-08'), odd])).toBeUndefined();
  });
});
