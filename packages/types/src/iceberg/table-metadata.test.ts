import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseJsonExact } from '../json-exact.ts';
import { ValidationError } from '../validation-error.ts';
import { parseLoadTableResult } from './load-table-result.ts';
import { parseTableMetadata, validateTableMetadata, type TableMetadata } from './table-metadata.ts';

const samples = new URL('../../test-data/samples/', import.meta.url);
const read = (name: string): string => readFileSync(new URL(name, samples), 'utf8');

const LONG_KEYS = [
  'snapshot-id',
  'parent-snapshot-id',
  'sequence-number',
  'current-snapshot-id',
  'last-sequence-number',
];

/** Every value of `key` in the raw text (sorted: schema output reorders keys). */
function rawValues(text: string, key: string): string[] {
  return [...text.matchAll(new RegExp(`"${key}"\\s*:\\s*(-?[0-9]+)`, 'g'))]
    .map((m) => m[1] ?? '')
    .sort();
}

/** Every value of `key` anywhere in the parsed value. */
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

function expectExactIds(text: string, metadata: unknown): void {
  for (const key of LONG_KEYS) {
    const parsed = parsedValues(metadata, key);
    expect(parsed.every((v) => typeof v === 'string')).toBe(true);
    expect((parsed as string[]).sort(), key).toEqual(rawValues(text, key));
  }
}

function errorOf(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error('expected a ValidationError');
}

describe('parseTableMetadata', () => {
  it.each(['v1.metadata.json', 'v2.metadata.json', 'v3.metadata.json'])(
    'parses %s with exact ids',
    (name) => {
      const text = read(name);
      const metadata = parseTableMetadata(text);
      expect(metadata['format-version']).toBe(Number(name[1]));
      expectExactIds(text, metadata);
    },
  );

  it('keeps v2 details: refs, nested types, sort order, statistics', () => {
    const metadata = parseTableMetadata(read('v2.metadata.json'));
    if (metadata['format-version'] !== 2) throw new Error('expected v2');
    expect(metadata['current-snapshot-id']).toBe('6716213459318430795');
    expect(metadata['last-sequence-number']).toBe('34');
    expect(metadata.refs?.['audit-2025']).toEqual({
      'snapshot-id': '-4812451264562334011',
      type: 'tag',
      'max-ref-age-ms': 2592000000,
    });
    expect(metadata.snapshots?.[2]?.summary.operation).toBe('replace');
    expect(metadata.snapshots?.[2]?.['parent-snapshot-id']).toBe('3055729675574597004');
    expect(metadata.schemas[1]?.fields[2]?.type).toMatchObject({
      type: 'map',
      value: 'decimal(9, 2)',
    });
    expect(metadata['sort-orders'][1]?.fields[1]).toEqual({
      transform: 'hour',
      'source-id': 9,
      direction: 'desc',
      'null-order': 'nulls-last',
    });
    expect(metadata.statistics?.[0]?.['blob-metadata'][0]?.['sequence-number']).toBe('34');
  });

  it('keeps v1 specifics and v3 additions', () => {
    const v1 = parseTableMetadata(read('v1.metadata.json'));
    if (v1['format-version'] !== 1) throw new Error('expected v1');
    expect(v1['partition-spec']).toEqual([
      { name: 'x', transform: 'identity', 'source-id': 1, 'field-id': 1000 },
    ]);
    expect(v1['current-snapshot-id']).toBe('-1');
    expect(v1.snapshots?.[0]?.manifests).toHaveLength(1);

    const v3 = parseTableMetadata(read('v3.metadata.json'));
    if (v3['format-version'] !== 3) throw new Error('expected v3');
    expect(v3['next-row-id']).toBe('18446744');
    expect(v3['last-sequence-number']).toBe('9223372036854775807');
    expect(v3.schemas[0]?.fields.map((f) => f.type)).toEqual([
      'uuid',
      'variant',
      'timestamptz_ns',
      'geometry(srid:4326)',
      'unknown',
      'string',
    ]);
    expect(v3['encryption-keys']?.[0]?.['key-id']).toBe('k1');
    expect(v3.snapshots?.[0]?.['first-row-id']).toBe('0');
  });

  it('lets unknown keys through at every level', () => {
    const value = parseJsonExact(read('v2.metadata.json')) as Record<string, unknown> & {
      snapshots: Record<string, unknown>[];
    };
    value['future-field'] = { a: 1 };
    value.snapshots[0] = { ...value.snapshots[0], 'future-snapshot-field': true };
    const metadata: TableMetadata & Record<string, unknown> = validateTableMetadata(value);
    expect(metadata['future-field']).toEqual({ a: 1 });
    expect(metadata.snapshots?.[0]).toHaveProperty('future-snapshot-field', true);
  });

  const REMOVE = Symbol('remove');

  /** The v2 sample with the value at `path` replaced (or removed). */
  function v2With(path: readonly (string | number)[], value: unknown): string {
    const root = parseJsonExact(read('v2.metadata.json'));
    let node = root as Record<string | number, unknown>;
    for (const segment of path.slice(0, -1))
      node = node[segment] as Record<string | number, unknown>;
    const last = path[path.length - 1] ?? '';
    if (value === REMOVE) delete node[last];
    else node[last] = value;
    return JSON.stringify(root);
  }

  it.each([
    [
      'a float snapshot id',
      v2With(['snapshots', 2, 'snapshot-id'], 1.5),
      'snapshots[2].snapshot-id',
      /64-bit integer/,
    ],
    [
      'a non-numeric id',
      v2With(['snapshots', 0, 'parent-snapshot-id'], 'abc'),
      'snapshots[0].parent-snapshot-id',
      /64-bit integer/,
    ],
    [
      'a missing summary operation',
      v2With(['snapshots', 1, 'summary', 'operation'], REMOVE),
      'snapshots[1].summary.operation',
      /.+/,
    ],
    [
      'a numeric summary value',
      v2With(['snapshots', 1, 'summary', 'total-records'], 1000),
      'snapshots[1].summary.total-records',
      /string/,
    ],
    [
      'a missing manifest list (v2)',
      v2With(['snapshots', 0, 'manifest-list'], REMOVE),
      'snapshots[0].manifest-list',
      /.+/,
    ],
    ['a bad ref type', v2With(['refs', 'main', 'type'], 'head'), 'refs.main.type', /.+/],
    [
      'a bad null order',
      v2With(['sort-orders', 1, 'fields', 0, 'null-order'], 'first'),
      'sort-orders[1].fields[0].null-order',
      /.+/,
    ],
    [
      'a partition field without source',
      v2With(['partition-specs', 1, 'fields', 0, 'source-id'], REMOVE),
      'partition-specs[1].fields[0].source-id',
      /source-id/,
    ],
    [
      'a list without element id',
      v2With(['schemas', 1, 'fields', 1, 'type', 'fields', 1, 'type', 'element-id'], REMOVE),
      'schemas[1].fields[1].type.fields[1].type.element-id',
      /.+/,
    ],
    [
      'an unknown nested type',
      v2With(['schemas', 1, 'fields', 2, 'type', 'type'], 'tuple'),
      'schemas[1].fields[2].type.type',
      /struct/,
    ],
    [
      'a numeric type',
      v2With(['schemas', 0, 'fields', 0, 'type'], 5),
      'schemas[0].fields[0].type',
      /primitive type name/,
    ],
    [
      'a missing last-sequence-number',
      v2With(['last-sequence-number'], REMOVE),
      'last-sequence-number',
      /.+/,
    ],
    ['format version 4', v2With(['format-version'], 4), 'format-version', /.+/],
    ['not JSON', '{"format-version": 2', '', /not JSON/],
  ])('rejects %s, naming %s', (_label, text, path, message) => {
    const error = errorOf(() => parseTableMetadata(text));
    expect(error.issues[0]?.path).toBe(path);
    expect(error.issues[0]?.message).toMatch(message);
    expect(error.message).toContain(path === '' ? 'not JSON' : `${path}: `);
  });

  it('rejects a v3 table without next-row-id', () => {
    const value = parseJsonExact(read('v3.metadata.json')) as Record<string, unknown>;
    delete value['next-row-id'];
    expect(errorOf(() => validateTableMetadata(value)).issues[0]?.path).toBe('next-row-id');
  });
});

describe('parseLoadTableResult', () => {
  it('parses the REST response with exact ids and vended credentials', () => {
    const metadata = read('v2.metadata.json');
    const text = `{"metadata-location":"s3://warehouse/sales/orders/metadata/00034-x.metadata.json","metadata":${metadata},"config":{"client.region":"eu-west-1"},"storage-credentials":[{"prefix":"s3://warehouse/sales","config":{"s3.access-key-id":"AKIA"}}]}`;
    const result = parseLoadTableResult(text);
    expect(result['metadata-location']).toMatch(/00034/);
    expect(result['storage-credentials']?.[0]?.prefix).toBe('s3://warehouse/sales');
    expectExactIds(metadata, result.metadata);
  });

  it('names the field inside metadata', () => {
    const text = `{"metadata":{"format-version":2}}`;
    expect(errorOf(() => parseLoadTableResult(text)).issues[0]?.path).toMatch(/^metadata\./);
  });
});
