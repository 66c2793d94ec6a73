// Parsers for policy property values. Each returns the value or a reason naming what was expected.
import { parseDuration as parseDurationMs } from '@icepack/runtime';

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

/** `30m`, `1h`, `2d`, `90s` or a bare number of milliseconds (the runtime's duration format). */
export const parseDuration: PropertyParser<number> = (text) => {
  try {
    return ok(parseDurationMs(text));
  } catch {
    return bad('expected a duration such as 30s, 10m, 1h or 2d');
  }
};
