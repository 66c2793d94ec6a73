import { describe, expect, it } from 'vitest';
import { sampleTableState } from './samples.ts';
import { isTombstone, tableStateSchema } from './table-state.ts';
import { formatPath } from './validation-error.ts';

function firstPath(value: unknown): string | undefined {
  const result = tableStateSchema.safeParse(value);
  return result.success ? undefined : formatPath(result.error.issues[0]?.path ?? []);
}

describe('tableStateSchema', () => {
  it('accepts a full state and keeps it unchanged', () => {
    const state = sampleTableState();
    expect(tableStateSchema.parse(state)).toEqual(state);
  });

  it('accepts a brand-new empty table', () => {
    const empty = sampleTableState({
      currentSnapshotId: null,
      lastSequenceNumber: '0',
      sizeHistogram: [],
      refs: [],
      partitions: [],
      snapshots: { total: 0, sinceLastRewrite: 0 },
      newData: { sinceSnapshotId: null, files: 0, records: 0, bytes: 0, share: 0 },
    });
    delete empty.lastMaintenance;
    expect(tableStateSchema.parse(empty)).toEqual(empty);
  });

  const base = sampleTableState();
  it.each([
    [{ currentSnapshotId: 42 }, 'currentSnapshotId'],
    [{ lastSequenceNumber: 3 }, 'lastSequenceNumber'],
    [{ formatVersion: 4 }, 'formatVersion'],
    [{ scannedAt: '2026-01-01' }, 'scannedAt'],
    [{ files: { ...base.files, smallFiles: -1 } }, 'files.smallFiles'],
    [{ files: { ...base.files, dataBytes: 1.5 } }, 'files.dataBytes'],
    [{ newData: { ...base.newData, share: 1.2 } }, 'newData.share'],
    [
      { sizeHistogram: [{ upperBoundBytes: 'big', files: 1, bytes: 1 }] },
      'sizeHistogram[0].upperBoundBytes',
    ],
    [{ refs: [{ name: 'audit', type: 'label', snapshotId: '1' }] }, 'refs[0].type'],
    [
      {
        sortOrder: {
          orderId: 1,
          fields: [
            { sourceId: 1, transform: 'identity', direction: 'up', nullOrder: 'nulls-first' },
          ],
        },
      },
      'sortOrder.fields[0].direction',
    ],
    [
      {
        partitions: [
          { specId: 0, partition: { d: 5 }, dataFiles: 1, smallFiles: 1, deleteFiles: 0, bytes: 1 },
        ],
      },
      'partitions[0].partition.d',
    ],
    [{ partitions: Array.from({ length: 101 }, () => base.partitions[0]) }, 'partitions'],
    [{ table: { catalog: 'prod', namespace: [], name: 't' } }, 'table.namespace'],
  ])('rejects %j at %s', (patch, path) => {
    expect(firstPath({ ...base, ...patch })).toBe(path);
  });
});

describe('isTombstone', () => {
  it.each([
    [null, true],
    [undefined, true],
    [Buffer.alloc(0), true],
    ['', true],
    [Buffer.from('{}'), false],
  ])('%j → %s', (value, expected) => {
    expect(isTombstone(value)).toBe(expected);
  });
});
