import { isInt64Text, isoDateTime } from './primitives.ts';
import {
  fileFiguresSchema,
  MAX_TABLE_STATE_PARTITIONS,
  NullOrder,
  RefType,
  SortDirection,
} from './table-state.ts';
import type { TableState } from './table-state.ts';

/**
 * A hand-written check of a `TableScanned` payload as `JSON.parse` made it, for the planner's
 * hot path (issue 17 point 6, ADR 0050): zod's parse of a state listing 100 partitions costs
 * ~0.5 ms, more than planning it; this check ~0.03 ms.
 *
 * It is not a second definition: `tableStateSchema` stays the only one. The check returns true
 * only for a value that schema accepts AND returns unchanged (no unknown key it would strip,
 * no default it would fill in), so the value can be used as the schema's output. Anything else
 * — a bad value, an extra key, a state of an older scanner without `danglingDeletes` — returns
 * false, and the caller parses it with the schema, which names the bad field or makes the
 * output as before. A unit test feeds both valid and mutated states and asserts they agree.
 *
 * Only for JSON-parsed values: it assumes plain objects and arrays, no `undefined`, no symbols.
 */
export function isExactTableState(value: unknown): value is TableState {
  if (!isPlainObject(value)) return false;
  let n = 0;
  for (const key in value) {
    const v = value[key];
    n++;
    switch (key) {
      case 'table':
        if (!tableId(v)) return false;
        break;
      case 'scannedAt':
        if (!dateTime(v)) return false;
        break;
      case 'metadataLocation':
      case 'tableUuid':
        if (!nonEmpty(v)) return false;
        break;
      case 'formatVersion':
        if (v !== 1 && v !== 2 && v !== 3) return false;
        break;
      case 'currentSnapshotId':
        if (v !== null && !int64Text(v)) return false;
        break;
      case 'lastSequenceNumber':
        if (!int64Text(v)) return false;
        break;
      case 'properties':
        if (!stringMap(v)) return false;
        break;
      case 'partitionSpec':
        if (!partitionSpec(v)) return false;
        break;
      case 'sortOrder':
        if (!sortOrder(v)) return false;
        break;
      case 'files':
        if (!fileFigures(v)) return false;
        break;
      case 'sizeHistogram':
        if (!arrayOf(v, sizeBucket)) return false;
        break;
      case 'snapshots':
        if (!snapshotFigures(v)) return false;
        break;
      case 'newData':
        if (!newData(v)) return false;
        break;
      case 'refs':
        if (!arrayOf(v, ref)) return false;
        break;
      case 'partitions':
        if (!arrayOf(v, partitionState, MAX_TABLE_STATE_PARTITIONS)) return false;
        break;
      case 'partitionTotals':
        n--;
        if (!partitionTotals(v)) return false;
        break;
      case 'otherPartitionSpecs':
        n--;
        if (!arrayOf(v, partitionSpec, MAX_TABLE_STATE_PARTITIONS)) return false;
        break;
      case 'lastMaintenance':
        n--;
        if (!lastMaintenance(v)) return false;
        break;
      default:
        return false;
    }
  }
  // Every required key (16), each counted once (JSON objects have no duplicate keys).
  return n === 16;
}

type Obj = Record<string, unknown>;

function isPlainObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const ISO_DATE_TIME: RegExp = (isoDateTime as unknown as { _zod: { def: { pattern: RegExp } } })
  ._zod.def.pattern;

function dateTime(v: unknown): boolean {
  return typeof v === 'string' && ISO_DATE_TIME.test(v);
}

function nonEmpty(v: unknown): boolean {
  return typeof v === 'string' && v.length >= 1;
}

function int64Text(v: unknown): boolean {
  return typeof v === 'string' && isInt64Text(v);
}

/** `count`: a non-negative safe integer. */
function count(v: unknown): boolean {
  return Number.isSafeInteger(v) && (v as number) >= 0;
}

function arrayOf(v: unknown, item: (x: unknown) => boolean, max = Infinity): boolean {
  if (!Array.isArray(v) || v.length > max) return false;
  for (const x of v) if (!item(x)) return false;
  return true;
}

/**
 * The object has only `keys` (each one checked by its function: absent is `undefined`), and
 * every key whose function refuses `undefined` (a required one).
 */
function shape(v: unknown, fields: Readonly<Record<string, (x: unknown) => boolean>>): boolean {
  if (!isPlainObject(v)) return false;
  for (const key in v) if (!Object.hasOwn(fields, key)) return false;
  for (const key in fields) if (!fields[key]!(v[key])) return false;
  return true;
}

function optional(check: (x: unknown) => boolean): (x: unknown) => boolean {
  return (x) => x === undefined || check(x);
}

/** A record of strings; `__proto__` as a key is left to the schema (it drops it). */
function stringMap(v: unknown): boolean {
  if (!isPlainObject(v)) return false;
  for (const key in v) if (key === '__proto__' || typeof v[key] !== 'string') return false;
  return true;
}

function tableId(v: unknown): boolean {
  if (!isPlainObject(v)) return false;
  let n = 0;
  for (const key in v) {
    const x = v[key];
    n++;
    if (key === 'catalog' || key === 'name') {
      if (!nonEmpty(x)) return false;
    } else if (key !== 'namespace' || !Array.isArray(x) || x.length < 1) return false;
    else for (const part of x as unknown[]) if (!nonEmpty(part)) return false;
  }
  return n === 3;
}

const partitionField = (v: unknown) =>
  shape(v, {
    sourceId: count,
    fieldId: count,
    name: nonEmpty,
    transform: nonEmpty,
    column: optional(nonEmpty),
  });

function partitionSpec(v: unknown): boolean {
  return shape(v, { specId: count, fields: (x) => arrayOf(x, partitionField) });
}

const oneOf =
  (values: Readonly<Record<string, string>>) =>
  (v: unknown): boolean =>
    typeof v === 'string' && Object.values(values).includes(v);

const sortField = (v: unknown) =>
  shape(v, {
    sourceId: count,
    column: optional(nonEmpty),
    transform: nonEmpty,
    direction: oneOf(SortDirection),
    nullOrder: oneOf(NullOrder),
  });

function sortOrder(v: unknown): boolean {
  return shape(v, { orderId: count, fields: (x) => arrayOf(x, sortField) });
}

const danglingDeletes = (v: unknown) =>
  shape(v, { positionDeleteFiles: count, equalityDeleteFiles: count, deletionVectors: count });

// Every file figure is a count, but `danglingDeletes`: required here, for absent the schema
// fills in its default (a changed value).
const FILE_FIGURES: Readonly<Record<string, (x: unknown) => boolean>> = {
  ...Object.fromEntries(Object.keys(fileFiguresSchema.shape).map((key) => [key, count])),
  danglingDeletes,
};

function fileFigures(v: unknown): boolean {
  return shape(v, FILE_FIGURES);
}

const sizeBucket = (v: unknown) =>
  shape(v, { upperBoundBytes: (x) => x === null || count(x), files: count, bytes: count });

const expiry = (v: unknown) =>
  shape(v, {
    mainOnly: count,
    oldestMainOnlyAt: optional(dateTime),
    unreferenced: count,
    oldestUnreferencedAt: optional(dateTime),
  });

function snapshotFigures(v: unknown): boolean {
  return shape(v, {
    total: count,
    sinceLastExpire: optional(count),
    sinceLastRewrite: count,
    oldestAt: optional(dateTime),
    newestAt: optional(dateTime),
    expiry: optional(expiry),
  });
}

function newData(v: unknown): boolean {
  return shape(v, {
    sinceSnapshotId: (x) => x === null || int64Text(x),
    sinceSequenceNumber: optional(int64Text),
    files: count,
    records: count,
    bytes: count,
    share: (x) => typeof x === 'number' && x >= 0 && x <= 1,
  });
}

const ref = (v: unknown) =>
  shape(v, {
    name: nonEmpty,
    type: oneOf(RefType),
    snapshotId: int64Text,
    maxRefAgeMs: optional(count),
    maxSnapshotAgeMs: optional(count),
    minSnapshotsToKeep: optional(count),
  });

/** A partition record: `__proto__` as a key is left to the schema. */
function partitionValues(v: unknown): boolean {
  if (!isPlainObject(v)) return false;
  for (const key in v) {
    const x = v[key];
    if (key === '__proto__' || (x !== null && typeof x !== 'string')) return false;
  }
  return true;
}

/** The hot loop (100 a state): a switch over the keys, no closure per field. */
function partitionState(v: unknown): boolean {
  if (!isPlainObject(v)) return false;
  let required = 0;
  for (const key in v) {
    const x = v[key];
    switch (key) {
      case 'specId':
      case 'dataFiles':
      case 'smallFiles':
      case 'deleteFiles':
      case 'bytes':
        if (!count(x)) return false;
        required++;
        break;
      case 'partition':
        if (!partitionValues(x)) return false;
        required++;
        break;
      case 'smallFileBytes':
      case 'deleteFileBytes':
        if (!count(x)) return false;
        break;
      case 'lastSequenceNumber':
        if (!int64Text(x)) return false;
        break;
      case 'lastChangedAt':
        if (!dateTime(x)) return false;
        break;
      default:
        return false;
    }
  }
  return required === 6;
}

function partitionTotals(v: unknown): boolean {
  return shape(v, { partitions: count, needingWork: count, listed: count });
}

function lastMaintenance(v: unknown): boolean {
  return shape(v, {
    cleanup: optional(dateTime),
    merge: optional(dateTime),
    sort: optional(dateTime),
    orphans: optional(dateTime),
  });
}
