import { sampleTableId, ValidationError } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { tableState } from './state-fixtures.ts';
import {
  MAX_OVERVIEW_PAGE_SIZE,
  overviewPage,
  parseOverviewQuery,
  summarize,
  type TableSummary,
} from './table-overview.ts';

function row(key: string, figures: Partial<TableSummary> = {}): TableSummary {
  const [catalog = '', namespace = '', name = ''] = key.split('/');
  return {
    tableKey: key,
    catalog,
    namespace,
    name,
    dataFiles: 0,
    smallFiles: 0,
    deleteFiles: 0,
    snapshots: 0,
    bytes: 0,
    scannedAt: '2026-01-01T00:00:00.000Z',
    lastMaintenance: {},
    ...figures,
  };
}

describe('parseOverviewQuery', () => {
  it('defaults to worst first: most small files, 50 a page', () => {
    expect(parseOverviewQuery({})).toEqual({
      sort: 'smallFiles',
      dir: 'desc',
      page: 1,
      pageSize: 50,
    });
    expect(parseOverviewQuery({ sort: 'table' }).dir).toBe('asc');
  });

  it.each([
    [{ sort: 'size' }, 'sort'],
    [{ dir: 'up' }, 'dir'],
    [{ page: '0' }, 'page'],
    [{ page: '1.5' }, 'page'],
    [{ pageSize: String(MAX_OVERVIEW_PAGE_SIZE + 1) }, 'pageSize'],
    [{ pageSize: 'x' }, 'pageSize'],
    [{ q: ['a', 'b'] }, 'q'],
  ])('%j is refused naming %s', (query, field) => {
    let caught: unknown;
    try {
      parseOverviewQuery(query);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    expect((caught as ValidationError).issues.map((i) => i.path)).toEqual([field]);
    expect((caught as Error).message).toContain(`${field}: `);
  });

  it('drops an empty filter', () => {
    expect(parseOverviewQuery({ catalog: '', q: '  ' })).not.toHaveProperty('catalog');
    expect(parseOverviewQuery({ catalog: '', q: '  ' })).not.toHaveProperty('q');
  });
});

describe('summarize', () => {
  it('takes the figures the overview sorts by from the state', () => {
    const s = summarize(
      tableState(
        { smallFiles: 80, snapshots: 60, positionDeleteFiles: 3, equalityDeleteFiles: 2 },
        { table: sampleTableId({ catalog: 'prod', name: 'orders' }) },
      ),
    );
    expect(s).toMatchObject({ catalog: 'prod', name: 'orders', smallFiles: 80, snapshots: 60 });
    expect(s.deleteFiles).toBe(5);
    expect(s.tableKey).toBe(`prod/${s.namespace.split('.').join('/')}/orders`);
  });
});

describe('overviewPage', () => {
  const rows = [
    row('prod/a/t1', { smallFiles: 5, bytes: 300 }),
    row('prod/a/t2', { smallFiles: 50, bytes: 100 }),
    row('dev/a/t3', {
      smallFiles: 50,
      bytes: 200,
      lastMaintenance: { merge: '2026-01-02T00:00:00Z' },
    }),
    row('prod/b/T4', {
      smallFiles: 0,
      bytes: 400,
      lastMaintenance: { cleanup: '2026-01-03T00:00:00Z' },
    }),
  ];
  const q = (extra: Record<string, string> = {}) => parseOverviewQuery(extra);

  it('sorts worst first and breaks ties on the table key', () => {
    expect(overviewPage(rows, q()).rows.map((r) => r.tableKey)).toEqual([
      'dev/a/t3',
      'prod/a/t2',
      'prod/a/t1',
      'prod/b/T4',
    ]);
    expect(overviewPage(rows, q({ sort: 'bytes', dir: 'asc' })).rows.map((r) => r.bytes)).toEqual([
      100, 200, 300, 400,
    ]);
  });

  it('sorts by the latest maintenance of any type, never maintained first ascending', () => {
    const keys = overviewPage(rows, q({ sort: 'lastMaintenance', dir: 'asc' })).rows.map(
      (r) => r.tableKey,
    );
    expect(keys.slice(2)).toEqual(['dev/a/t3', 'prod/b/T4']);
  });

  it('filters by catalog and by a case-insensitive part of the key', () => {
    expect(overviewPage(rows, q({ catalog: 'dev' })).rows.map((r) => r.tableKey)).toEqual([
      'dev/a/t3',
    ]);
    const page = overviewPage(rows, q({ q: 'b/t' }));
    expect(page.rows.map((r) => r.tableKey)).toEqual(['prod/b/T4']);
    expect(page.total).toBe(1);
  });

  it('pages through the tables showing each exactly once, in order across pages', () => {
    const many = Array.from({ length: 2_000 }, (_, i) =>
      row(`prod/ns/t${i}`, { smallFiles: i % 97, bytes: i }),
    );
    const seen = new Set<string>();
    let previous = Number.POSITIVE_INFINITY;
    const first = overviewPage(many, q({ pageSize: '100' }));
    expect(first).toMatchObject({ total: 2_000, pages: 20, page: 1 });
    for (let page = 1; page <= first.pages; page++) {
      for (const r of overviewPage(many, q({ pageSize: '100', page: String(page) })).rows) {
        expect(r.smallFiles).toBeLessThanOrEqual(previous);
        previous = r.smallFiles;
        seen.add(r.tableKey);
      }
    }
    expect(seen.size).toBe(2_000);
    expect(overviewPage(many, q({ page: '999999' })).rows).toEqual([]);
  });

  it('answers a page of 100,000 tables with the total and page count', () => {
    const many = Array.from({ length: 100_000 }, (_, i) => row(`prod/ns/t${i}`, { bytes: i }));
    const page = overviewPage(many, q({ sort: 'bytes', pageSize: '500', page: '2' }));
    expect(page).toMatchObject({ total: 100_000, pages: 200 });
    expect(page.rows.map((r) => r.bytes).slice(0, 2)).toEqual([99_499, 99_498]);
  });
});
