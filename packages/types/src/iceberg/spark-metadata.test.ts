import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseTableMetadata, type TableMetadata } from './table-metadata.ts';

// Real metadata.json files written by Iceberg 1.10.1 / Spark 4.0.1 (see the README there).
const dir = new URL('../../test-data/metadata/', import.meta.url);
const files = readdirSync(dir)
  .filter((name) => name.endsWith('.metadata.json'))
  .sort();
const read = (name: string): string => readFileSync(new URL(name, dir), 'utf8');

const LONG_KEYS = [
  'snapshot-id',
  'parent-snapshot-id',
  'sequence-number',
  'current-snapshot-id',
  'last-sequence-number',
  'next-row-id',
  'first-row-id',
  'added-rows',
];

function rawValues(text: string, key: string): string[] {
  return [...text.matchAll(new RegExp(`"${key}"\\s*:\\s*(-?[0-9]+)`, 'g'))]
    .map((m) => m[1] ?? '')
    .sort();
}

function parsedValues(value: unknown, key: string, out: unknown[] = []): unknown[] {
  if (Array.isArray(value)) for (const item of value) parsedValues(item, key, out);
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (k === key) out.push(v);
      else parsedValues(v, key, out);
    }
  }
  return out;
}

function parse(name: string): TableMetadata {
  return parseTableMetadata(read(name));
}

describe('metadata written by Spark', () => {
  it('has the samples to test against', () => {
    expect(files).toEqual([
      'v1-unpartitioned.metadata.json',
      'v2-equality-deletes.metadata.json',
      'v2-partitioned.metadata.json',
      'v2-position-deletes.metadata.json',
      'v2-sort-order.metadata.json',
      'v2-tag-branch-many-snapshots.metadata.json',
      'v3-deletion-vectors.metadata.json',
    ]);
  });

  it.each(files)('%s parses, and every 64-bit value is exactly the text', (name) => {
    const text = read(name);
    const metadata = parseTableMetadata(text);
    expect(metadata['format-version']).toBe(Number(/^v(\d)/.exec(name)?.[1]));
    let checked = 0;
    for (const key of LONG_KEYS) {
      const parsed = parsedValues(metadata, key);
      expect(
        parsed.every((v) => typeof v === 'string'),
        key,
      ).toBe(true);
      expect((parsed as string[]).sort(), key).toEqual(rawValues(text, key));
      checked += parsed.length;
    }
    expect(checked).toBeGreaterThan(0);
    // The README promises ids above 2^53: the point of exact parsing.
    const ids = parsedValues(metadata, 'snapshot-id') as string[];
    expect(ids.some((id) => BigInt(id) > BigInt(Number.MAX_SAFE_INTEGER))).toBe(true);
  });

  it('v1: legacy layout with top-level schema and partition-spec', () => {
    const metadata = parse('v1-unpartitioned.metadata.json');
    if (metadata['format-version'] !== 1) throw new Error('expected v1');
    expect(metadata.schema.fields.length).toBeGreaterThan(0);
    expect(metadata['partition-spec']).toEqual([]);
    expect(metadata.snapshots).toHaveLength(2);
    expect(metadata.snapshots?.every((s) => s['sequence-number'] === undefined)).toBe(true);
  });

  it('v2 sort order: event_ts ASC NULLS FIRST, id DESC NULLS LAST', () => {
    const metadata = parse('v2-sort-order.metadata.json');
    const order = metadata['sort-orders']?.find(
      (o) => o['order-id'] === metadata['default-sort-order-id'],
    );
    expect(order?.fields.map((f) => [f.direction, f['null-order']])).toEqual([
      ['asc', 'nulls-first'],
      ['desc', 'nulls-last'],
    ]);
  });

  it('v2 refs: a tag and a branch with retention', () => {
    const metadata = parse('v2-tag-branch-many-snapshots.metadata.json');
    expect(metadata.snapshots).toHaveLength(63);
    expect(metadata.refs?.['release-1']).toMatchObject({
      type: 'tag',
      'max-ref-age-ms': 315360000000,
    });
    expect(metadata.refs?.audit?.type).toBe('branch');
    expect(metadata.refs?.main?.['snapshot-id']).toBe(metadata['current-snapshot-id']);
  });

  it('v2 deletes: summaries keep delete counters as strings', () => {
    const equality = parse('v2-equality-deletes.metadata.json');
    expect(
      equality.snapshots?.some(
        (s) =>
          s.summary?.operation === 'delete' &&
          s.summary['added-equality-delete-files'] !== undefined,
      ),
    ).toBe(true);
    const position = parse('v2-position-deletes.metadata.json');
    expect(position.properties?.['write.delete.mode']).toBe('merge-on-read');
    expect(
      position.snapshots?.some((s) => Number(s.summary?.['total-position-deletes'] ?? '0') > 0),
    ).toBe(true);
  });

  it('v3: row lineage and deletion vectors', () => {
    const metadata = parse('v3-deletion-vectors.metadata.json');
    if (metadata['format-version'] !== 3) throw new Error('expected v3');
    expect(metadata['next-row-id']).toMatch(/^\d+$/);
    const last = metadata.snapshots?.at(-1);
    expect(last?.['first-row-id']).toMatch(/^\d+$/);
    expect(metadata.snapshots?.some((s) => Number(s.summary?.['added-dvs'] ?? '0') > 0)).toBe(true);
  });
});
