import { describe, expect, it } from 'vitest';
import { disappearedTables } from './discovery-diff.ts';
import { isUnchanged } from './scan-outcome.ts';

describe('disappearedTables', () => {
  it('lists known tables the walk did not find, and only those', () => {
    expect(
      disappearedTables(['c/a/t2', 'c/a/t1', 'c/b/t'], new Set(['c/a/t1', 'c/a/new'])),
    ).toEqual(['c/a/t2', 'c/b/t']);
    expect(disappearedTables([], new Set(['x']))).toEqual([]);
  });
});

describe('isUnchanged', () => {
  it('is true only for the same metadata location as the last published state', () => {
    expect(isUnchanged('file:/m/00001.metadata.json', 'file:/m/00001.metadata.json')).toBe(true);
    expect(isUnchanged('file:/m/00001.metadata.json', 'file:/m/00002.metadata.json')).toBe(false);
    expect(isUnchanged(undefined, 'file:/m/00001.metadata.json')).toBe(false);
  });
});
