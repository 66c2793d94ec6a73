import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { IcebergError } from '../errors/iceberg-error.ts';
import { snapshotAncestry, snapshotsSinceLast } from './snapshot-history.ts';
import { parseTableModel } from './to-table-model.ts';

const sample = (name: string): string =>
  readFileSync(
    fileURLToPath(new URL(`../../../types/test-data/metadata/${name}`, import.meta.url)),
    'utf8',
  );

describe('parseTableModel (Spark-written metadata)', () => {
  it('v2 with tags and many snapshots: exact ids, refs, ancestry of main', () => {
    const text = sample('v2-tag-branch-many-snapshots.metadata.json');
    const raw = JSON.parse(text) as {
      'current-snapshot-id': number;
      snapshots: unknown[];
      refs: Record<string, unknown>;
    };
    const model = parseTableModel(text);
    expect(model.formatVersion).toBe(2);
    // The id as written in the file, digit for digit (JSON.parse would have rounded it).
    const idText = /"current-snapshot-id"\s*:\s*(\d+)/.exec(text)![1];
    expect(model.currentSnapshotId).toBe(idText);
    expect(model.snapshots).toHaveLength(raw.snapshots.length);
    expect([...model.refs.keys()].sort()).toEqual(Object.keys(raw.refs).sort());
    const ancestry = snapshotAncestry(model);
    expect(ancestry[0]!.snapshotId).toBe(idText);
    for (let i = 1; i < ancestry.length; i++)
      expect(ancestry[i - 1]!.parentSnapshotId).toBe(ancestry[i]!.snapshotId);
  });

  it('v1 metadata gets a main branch and sequence number 0', () => {
    const model = parseTableModel(sample('v1-unpartitioned.metadata.json'));
    expect(model.formatVersion).toBe(1);
    expect(model.lastSequenceNumber).toBe('0');
    if (model.currentSnapshotId !== null)
      expect(model.refs.get('main')?.snapshotId).toBe(model.currentSnapshotId);
  });

  it('v3 deletion-vector table: sort order, partition spec and operations', () => {
    const model = parseTableModel(sample('v3-deletion-vectors.metadata.json'));
    expect(model.formatVersion).toBe(3);
    expect(model.snapshots.at(-1)!.operation).toBe('delete');
    expect(model.snapshots.at(-1)!.summary['added-dvs']).toBe('8');
    expect(model.partitionSpecs.get(model.defaultSpecId)!.fields).toEqual([]);
  });

  it('bad JSON and invalid metadata give invalid-metadata errors naming the file', () => {
    const badJson = (() => {
      try {
        parseTableModel('{"format-version": 2,', 's3://b/t/metadata/v9.metadata.json');
      } catch (error) {
        return error as IcebergError;
      }
      throw new Error('expected an error');
    })();
    expect(badJson).toBeInstanceOf(IcebergError);
    expect(badJson.kind).toBe('invalid-metadata');
    expect(badJson.message).toContain('s3://b/t/metadata/v9.metadata.json');
    expect(() => parseTableModel('{"format-version": 2}', 'x.json')).toThrow(/x\.json/);
  });
});

describe('snapshotsSinceLast', () => {
  const snapshot = (id: number, parent: number | null, operation: string): object => ({
    'snapshot-id': id,
    ...(parent === null ? {} : { 'parent-snapshot-id': parent }),
    'sequence-number': id,
    'timestamp-ms': 1000 * id,
    'manifest-list': `file:/t/snap-${id}.avro`,
    summary: { operation },
  });
  const table = (snapshots: object[], current: number): string =>
    JSON.stringify({
      'format-version': 2,
      'table-uuid': 'u',
      location: 'file:/t',
      'last-sequence-number': 9,
      'last-updated-ms': 1,
      'last-column-id': 1,
      'current-schema-id': 0,
      schemas: [
        {
          type: 'struct',
          'schema-id': 0,
          fields: [{ id: 1, name: 'a', required: false, type: 'int' }],
        },
      ],
      'default-spec-id': 0,
      'partition-specs': [{ 'spec-id': 0, fields: [] }],
      'last-partition-id': 999,
      'default-sort-order-id': 0,
      'sort-orders': [{ 'order-id': 0, fields: [] }],
      'current-snapshot-id': current,
      snapshots,
    });

  it('returns the snapshots after the last replace on the main lineage, oldest first', () => {
    const model = parseTableModel(
      table(
        [
          snapshot(1, null, 'append'),
          snapshot(2, 1, 'replace'),
          snapshot(3, 2, 'append'),
          snapshot(4, 3, 'overwrite'),
          snapshot(5, 2, 'append'),
        ],
        4,
      ),
    );
    const since = snapshotsSinceLast(model, 'replace');
    expect(since.since?.snapshotId).toBe('2');
    // Snapshot 5 is on another lineage (e.g. a branch): not an ancestor of main.
    expect(since.snapshots.map((s) => s.snapshotId)).toEqual(['3', '4']);
  });

  it('with no such operation, returns the whole ancestry', () => {
    const model = parseTableModel(
      table([snapshot(1, null, 'append'), snapshot(2, 1, 'append')], 2),
    );
    expect(snapshotsSinceLast(model, 'replace')).toEqual({
      since: null,
      snapshots: model.snapshots,
    });
  });
});
