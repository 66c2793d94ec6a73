// Parsers for policy property values. Each returns the value or a reason naming what was expected.
import { parseDuration as parseDurationMs } from '@icepack/runtime';
import { HILBERT_DIMENSIONS } from '@icepack/types';

export type Parsed<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const bad = (reason: string): Parsed<never> => ({ ok: false, reason });

export type PropertyParser<T> = (text: string) => Parsed<T>;

export const parseBoolean: PropertyParser<boolean> = (text) => {
  const t = text.trim().toLowerCase();
  if (t === 'true') return ok(true);
  if (t === 'false') return ok(false);
  return bad('expected true or false');
};

/** A whole number ≥ `min` that is a safe integer (sizes, counts, milliseconds). */
export function integerAtLeast(min: number): PropertyParser<number> {
  return (text) => {
    const t = text.trim();
    if (!/^[0-9]+$/.test(t)) return bad(`expected a whole number ≥ ${min}`);
    const value = Number(t);
    if (!Number.isSafeInteger(value)) return bad('too large');
    if (value < min) return bad(`expected a whole number ≥ ${min}`);
    return ok(value);
  };
}

/** A share of the table: `0.3` or `30%`, between 0 and 1. */
export const parseShare: PropertyParser<number> = (text) => {
  const t = text.trim();
  const percent = t.endsWith('%');
  const body = percent ? t.slice(0, -1).trim() : t;
  if (!/^[0-9]+(\.[0-9]+)?$|^\.[0-9]+$/.test(body)) {
    return bad('expected a share between 0 and 1 (e.g. 0.3) or a percentage (e.g. 30%)');
  }
  const value = percent ? Number(body) / 100 : Number(body);
  if (value > 1)
    return bad('expected a share between 0 and 1 (e.g. 0.3) or a percentage (e.g. 30%)');
  return ok(value);
};

export interface SortColumn {
  readonly name: string;
  readonly direction: 'asc' | 'desc';
  readonly nullOrder: 'nulls-first' | 'nulls-last';
}

const NULL_ORDERS: Record<string, SortColumn['nullOrder']> = {
  'nulls-first': 'nulls-first',
  'nulls first': 'nulls-first',
  'nulls-last': 'nulls-last',
  'nulls last': 'nulls-last',
};

/** `col [asc|desc] [nulls-first|nulls-last], …` (Spark's `sort_order` wording also accepted). */
export const parseSortColumns: PropertyParser<SortColumn[]> = (text) => {
  const items = text.split(',').map((item) => item.trim());
  if (items.length === 0 || items.some((item) => item === '')) {
    return bad(
      'expected a comma-separated list of columns, e.g. "customer_id, ts desc nulls-last"',
    );
  }
  const columns: SortColumn[] = [];
  for (const item of items) {
    const [name = '', ...rest] = item.split(/\s+/);
    let words = rest.map((w) => w.toLowerCase());
    let direction: SortColumn['direction'] = 'asc';
    if (words[0] === 'asc' || words[0] === 'desc') {
      direction = words[0];
      words = words.slice(1);
    }
    // Spark's default null order: first for ascending, last for descending.
    let nullOrder: SortColumn['nullOrder'] = direction === 'asc' ? 'nulls-first' : 'nulls-last';
    if (words.length > 0) {
      const order = NULL_ORDERS[words.join(' ')];
      if (order === undefined) {
        return bad(`cannot read "${item}": expected "column [asc|desc] [nulls-first|nulls-last]"`);
      }
      nullOrder = order;
    }
    columns.push({ name, direction, nullOrder });
  }
  return ok(columns);
};

/** `col, col, …` */
export const parseColumnList: PropertyParser<string[]> = (text) => {
  const items = text.split(',').map((item) => item.trim());
  if (items.some((item) => item === '' || /\s/.test(item))) {
    return bad('expected a comma-separated list of column names, e.g. "lat, lon"');
  }
  return ok(items);
};

/** Two distinct column names (`x, y`): the Hilbert curve's axes (`icepack.hilbert.columns`). */
export const parseHilbertColumns: PropertyParser<string[]> = (text) => {
  const list = parseColumnList(text);
  if (!list.ok) return list;
  if (list.value.length !== HILBERT_DIMENSIONS || list.value[0] === list.value[1]) {
    return bad(`expected ${HILBERT_DIMENSIONS} different column names, e.g. "lat, lon"`);
  }
  return list;
};

/** `30m`, `1h`, `2d`, `90s` or a bare number of milliseconds (the runtime's duration format). */
export const parseDuration: PropertyParser<number> = (text) => {
  try {
    return ok(parseDurationMs(text));
  } catch {
    return bad('expected a duration such as 30s, 10m, 1h or 2d');
  }
};

/** A duration (as `parseDuration`) of at least `minMs`; the reason names the floor and why. */
export function durationAtLeast(minMs: number, floor: string, why: string): PropertyParser<number> {
  return (text) => {
    const parsed = parseDuration(text);
    if (!parsed.ok || parsed.value >= minMs) return parsed;
    return bad(`must be at least ${floor}: ${why}`);
  };
}

/** Which partitions a merge or sort rewrites (`icepack.merge.strategy`). */
export type MergeStrategy =
  | { readonly kind: 'all' }
  | { readonly kind: 'recent'; readonly partitions: number }
  | { readonly kind: 'recent'; readonly days: number }
  | {
      readonly kind: 'selected';
      /** Any of these; each is field name → value text (null: a null value), all must match. */
      readonly filters: readonly Readonly<Record<string, string | null>>[];
    };

const STRATEGY_HINT =
  'expected all, recent:<partitions>, recent:<days>d or selected:<field>=<value>[,<field>=<value>][;…]';

/** `all`, `recent:10`, `recent:7d`, `selected:region=eu,day=2026-01-02;region=us` (`field=null`: null). */
export const parseMergeStrategy: PropertyParser<MergeStrategy> = (text) => {
  const t = text.trim();
  if (t.toLowerCase() === 'all') return ok({ kind: 'all' });
  const colon = t.indexOf(':');
  const kind = (colon < 0 ? t : t.slice(0, colon)).trim().toLowerCase();
  const arg = colon < 0 ? '' : t.slice(colon + 1).trim();
  if (kind === 'recent') {
    const m = /^([0-9]+)\s*(d?)$/.exec(arg);
    const n = m === null ? NaN : Number(m[1]);
    if (m === null || !Number.isSafeInteger(n) || n < 1) {
      return bad(`${STRATEGY_HINT}; recent needs a whole number ≥ 1 of partitions or days`);
    }
    return ok(m[2] === 'd' ? { kind: 'recent', days: n } : { kind: 'recent', partitions: n });
  }
  if (kind === 'selected') {
    const filters: Record<string, string | null>[] = [];
    for (const alternative of arg.split(';')) {
      const filter: Record<string, string | null> = {};
      for (const pair of alternative.split(',')) {
        const eq = pair.indexOf('=');
        const field = eq < 0 ? '' : pair.slice(0, eq).trim();
        if (field === '') return bad(`${STRATEGY_HINT}; cannot read "${pair.trim()}"`);
        const value = pair.slice(eq + 1).trim();
        filter[field] = value === 'null' ? null : value;
      }
      filters.push(filter);
    }
    return ok({ kind: 'selected', filters });
  }
  return bad(STRATEGY_HINT);
};

const SIZE_UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
};

/** Bytes: a whole number, or with a binary unit (`512MiB`, `100GiB`, `1TiB`); at least 1. */
export const parseByteSize: PropertyParser<number> = (text) => {
  const m = /^([0-9]+)\s*([a-z]*)$/i.exec(text.trim());
  const unit = SIZE_UNITS[m?.[2]?.toLowerCase() ?? 'x'];
  if (m === null || unit === undefined) {
    return bad(
      'expected a size in bytes, e.g. 107374182400 or 100GiB (units B, KiB, MiB, GiB, TiB)',
    );
  }
  const value = Number(m[1]) * unit;
  if (!Number.isSafeInteger(value)) return bad('too large');
  if (value < 1) return bad('expected a size of at least 1 byte');
  return ok(value);
};
