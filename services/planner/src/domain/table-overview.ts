import { tableKey, ValidationError, type TableState } from '@icepack/types';

/** One row of the console's table overview: the health figures a state carries. */
export interface TableSummary {
  readonly tableKey: string;
  readonly catalog: string;
  readonly namespace: string;
  readonly name: string;
  readonly dataFiles: number;
  readonly smallFiles: number;
  /** Position deletes + equality deletes + deletion vectors, as the rules count them. */
  readonly deleteFiles: number;
  readonly snapshots: number;
  readonly bytes: number;
  readonly scannedAt: string;
  readonly lastMaintenance: {
    readonly cleanup?: string;
    readonly merge?: string;
    readonly sort?: string;
  };
}

export const OverviewSortKeys = [
  'table',
  'smallFiles',
  'deleteFiles',
  'snapshots',
  'bytes',
  'dataFiles',
  'scannedAt',
  'lastMaintenance',
] as const;
export type OverviewSortKey = (typeof OverviewSortKeys)[number];

export interface OverviewQuery {
  /** Only this catalog's tables. */
  readonly catalog?: string;
  /** Case-insensitive substring of the table key. */
  readonly q?: string;
  readonly sort: OverviewSortKey;
  readonly dir: 'asc' | 'desc';
  /** 1-based. */
  readonly page: number;
  readonly pageSize: number;
}

export const MAX_OVERVIEW_PAGE_SIZE = 500;
const DEFAULT_PAGE_SIZE = 50;

/** A query parameter the overview cannot use: a `ValidationError` naming the field (400). */
function bad(field: string, message: string): ValidationError {
  return new ValidationError('overview query', [{ path: field, message, code: 'custom' }]);
}

function text(query: Readonly<Record<string, unknown>>, field: string): string | undefined {
  const value = query[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw bad(field, 'expected one value');
  return value;
}

function wholeNumber(
  query: Readonly<Record<string, unknown>>,
  field: string,
  fallback: number,
  max: number,
): number {
  const raw = text(query, field);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > max)
    throw bad(field, `expected a whole number from 1 to ${max}`);
  return n;
}

/**
 * Reads `?catalog=&q=&sort=&dir=&page=&pageSize=`. The default order is worst first: most
 * small files, descending. Throws `ValidationError` naming the bad field.
 */
export function parseOverviewQuery(query: Readonly<Record<string, unknown>>): OverviewQuery {
  const sort = text(query, 'sort') ?? 'smallFiles';
  if (!(OverviewSortKeys as readonly string[]).includes(sort))
    throw bad('sort', `expected one of ${OverviewSortKeys.join(', ')}`);
  const dir = text(query, 'dir') ?? (sort === 'table' ? 'asc' : 'desc');
  if (dir !== 'asc' && dir !== 'desc') throw bad('dir', 'expected asc or desc');
  const catalog = text(query, 'catalog');
  const q = text(query, 'q');
  return {
    ...(catalog === undefined || catalog === '' ? {} : { catalog }),
    ...(q === undefined || q.trim() === '' ? {} : { q: q.trim() }),
    sort: sort as OverviewSortKey,
    dir,
    page: wholeNumber(query, 'page', 1, Number.MAX_SAFE_INTEGER),
    pageSize: wholeNumber(query, 'pageSize', DEFAULT_PAGE_SIZE, MAX_OVERVIEW_PAGE_SIZE),
  };
}

export function summarize(state: TableState): TableSummary {
  const f = state.files;
  return {
    tableKey: tableKey(state.table),
    catalog: state.table.catalog,
    namespace: state.table.namespace.join('.'),
    name: state.table.name,
    dataFiles: f.dataFiles,
    smallFiles: f.smallFiles,
    deleteFiles: f.positionDeleteFiles + f.equalityDeleteFiles + f.deletionVectors,
    snapshots: state.snapshots.total,
    bytes: f.dataBytes,
    scannedAt: state.scannedAt,
    lastMaintenance: state.lastMaintenance ?? {},
  };
}

/** The latest maintenance of any type; '' when none (sorts first ascending: never maintained). */
function lastMaintained(s: TableSummary): string {
  const m = s.lastMaintenance;
  return [m.cleanup, m.merge, m.sort].reduce<string>(
    (a, b) => (b !== undefined && b > a ? b : a),
    '',
  );
}

function sortValue(s: TableSummary, key: OverviewSortKey): number | string {
  switch (key) {
    case 'table':
      return s.tableKey;
    case 'scannedAt':
      return s.scannedAt;
    case 'lastMaintenance':
      return lastMaintained(s);
    case 'smallFiles':
    case 'deleteFiles':
    case 'snapshots':
    case 'bytes':
    case 'dataFiles':
      return s[key];
  }
}

export interface OverviewPage {
  /** Rows that match the filter (all pages). */
  readonly total: number;
  readonly page: number;
  readonly pageSize: number;
  readonly pages: number;
  readonly rows: readonly TableSummary[];
}

/**
 * Filters, sorts and pages the summaries. Ties break on the table key, so paging through an
 * unchanged set shows every table exactly once. A page past the end is empty (not an error):
 * the set may have shrunk between two clicks.
 */
export function overviewPage(all: readonly TableSummary[], query: OverviewQuery): OverviewPage {
  const needle = query.q?.toLowerCase();
  const rows = all.filter(
    (s) =>
      (query.catalog === undefined || s.catalog === query.catalog) &&
      (needle === undefined || s.tableKey.toLowerCase().includes(needle)),
  );
  const sign = query.dir === 'asc' ? 1 : -1;
  // Decorate once: 100,000 rows sort in tens of milliseconds without re-reading each key.
  const keyed = rows.map((s) => ({ s, v: sortValue(s, query.sort) }));
  keyed.sort((a, b) => {
    if (a.v < b.v) return -sign;
    if (a.v > b.v) return sign;
    return a.s.tableKey < b.s.tableKey ? -1 : a.s.tableKey > b.s.tableKey ? 1 : 0;
  });
  const start = (query.page - 1) * query.pageSize;
  return {
    total: rows.length,
    page: query.page,
    pageSize: query.pageSize,
    pages: Math.max(1, Math.ceil(rows.length / query.pageSize)),
    rows: keyed.slice(start, start + query.pageSize).map((k) => k.s),
  };
}
