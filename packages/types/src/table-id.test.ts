import { describe, expect, it } from 'vitest';
import {
  formatTableName,
  InvalidTableKeyError,
  parseTableKey,
  sameTable,
  tableIdSchema,
  tableKey,
  type TableId,
} from './table-id.ts';

// A small seeded generator instead of a property-testing dependency: deterministic, so a
// failure reproduces, and biased towards the characters that matter for the key format.
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

// prettier-ignore
const ALPHABET = [
  'a', 'Z', '0', '9', '_', '-', ' ', '.', '/', ':', '%', '%2E', '"', "'", '`', '\\', '\t', '\n', '\u0000',
  '\u007f', '\u2028', 'é', 'ß', '表', '😀', '@', '#', '?', '&', '=', '+', '~',
];

function arbitraryPart(next: () => number): string {
  const length = 1 + Math.floor(next() * 8);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[Math.floor(next() * ALPHABET.length)];
  return out;
}

function arbitraryTableId(next: () => number): TableId {
  const depth = 1 + Math.floor(next() * 3);
  return {
    catalog: arbitraryPart(next),
    namespace: Array.from({ length: depth }, () => arbitraryPart(next)),
    name: arbitraryPart(next),
  };
}

describe('tableKey', () => {
  it.each([
    [{ catalog: 'prod', namespace: ['sales', 'eu'], name: 'orders' }, 'prod/sales.eu/orders'],
    [{ catalog: 'c', namespace: ['a.b'], name: 't' }, 'c/a%2Eb/t'],
    [{ catalog: 'c', namespace: ['a', 'b'], name: 't' }, 'c/a.b/t'],
    [{ catalog: 'c:1', namespace: ['n/s'], name: '50%' }, 'c%3A1/n%2Fs/50%25'],
    [{ catalog: 'c', namespace: ['my db'], name: 'café "x"' }, 'c/my db/café "x"'],
    [{ catalog: '1', namespace: ['2'], name: '3' }, '1/2/3'],
  ])('%j → %s', (id, key) => {
    expect(tableKey(id)).toBe(key);
    expect(parseTableKey(key)).toEqual(id);
  });

  it('round-trips arbitrary names and never produces a BullMQ-invalid id', () => {
    const next = random(42);
    const seen = new Map<string, string>();
    for (let i = 0; i < 2000; i++) {
      const id = arbitraryTableId(next);
      const key = tableKey(id);
      expect(parseTableKey(key)).toEqual(id);
      expect(key).not.toContain(':');
      expect(key).not.toMatch(/^[0-9]+$/);
      // eslint-disable-next-line no-control-regex
      expect(key).not.toMatch(/[\u0000-\u001f\u007f\u2028]/);
      // Injective: two different ids never share a key.
      const canonical = JSON.stringify(id);
      const previous = seen.get(key);
      if (previous !== undefined) expect(previous).toBe(canonical);
      seen.set(key, canonical);
    }
  });

  it.each([
    ['', 'expected catalog/namespace/table'],
    ['c/t', 'expected catalog/namespace/table'],
    ['c/n/t/x', 'expected catalog/namespace/table'],
    ['c//t', 'empty part'],
    ['c/a..b/t', 'empty part'],
    ['c/n/%zz', 'bad percent-encoding'],
    ['c/n/%61', 'not canonical'],
    ['c/n/a:b', 'not canonical'],
  ])('rejects %j (%s)', (key, reason) => {
    expect(() => parseTableKey(key)).toThrow(InvalidTableKeyError);
    expect(() => parseTableKey(key)).toThrow(reason);
  });
});

describe('formatTableName', () => {
  it.each([
    [{ catalog: 'prod', namespace: ['sales', 'eu'], name: 'orders' }, 'prod.sales.eu.orders'],
    [{ catalog: 'prod', namespace: ['a.b'], name: 'my table' }, 'prod.`a.b`.`my table`'],
    [{ catalog: 'prod', namespace: ['x'], name: 'we`ird' }, 'prod.x.`we``ird`'],
  ])('%j → %s', (id, name) => {
    expect(formatTableName(id)).toBe(name);
  });
});

describe('tableIdSchema', () => {
  it('accepts a table id', () => {
    expect(tableIdSchema.parse({ catalog: 'c', namespace: ['n'], name: 't' })).toEqual({
      catalog: 'c',
      namespace: ['n'],
      name: 't',
    });
  });

  it.each([
    [{ catalog: '', namespace: ['n'], name: 't' }, 'catalog'],
    [{ catalog: 'c', namespace: [], name: 't' }, 'namespace'],
    [{ catalog: 'c', namespace: [''], name: 't' }, 'namespace'],
    [{ catalog: 'c', namespace: ['n'] }, 'name'],
    [{ catalog: 'c', namespace: 'n', name: 't' }, 'namespace'],
  ])('rejects %j at %s', (value, field) => {
    const result = tableIdSchema.safeParse(value);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path[0]).toBe(field);
  });

  it('sameTable compares structurally', () => {
    expect(
      sameTable(
        { catalog: 'c', namespace: ['a', 'b'], name: 't' },
        { catalog: 'c', namespace: ['a', 'b'], name: 't' },
      ),
    ).toBe(true);
    expect(
      sameTable(
        { catalog: 'c', namespace: ['a.b'], name: 't' },
        { catalog: 'c', namespace: ['a', 'b'], name: 't' },
      ),
    ).toBe(false);
  });
});
