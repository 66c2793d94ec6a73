import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEnvelope, parseEnvelope, parseMessage } from './messages.ts';
import { parseJsonExact, stringifyJson } from './json-exact.ts';
import { packTableState } from './packed-partitions.ts';
import { MessageType } from './message-types.ts';
import { sampleTableState } from './samples.ts';
import { isExactTableState } from './table-state-check.ts';
import { MAX_TABLE_STATE_PARTITIONS, tableStateSchema, type TableState } from './table-state.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const MiB = 1024 ** 2;

/** Partition values: some null, and not every partition with every field. */
function partitionValues(i: number): Record<string, string | null> {
  return i % 3 === 0 ? { day: null, b: String(i) } : { day: `2026-01-0${1 + (i % 9)}` };
}

/** Valid states covering every optional field, absent and present. */
function corpus(listed = 12): TableState[] {
  const full = sampleTableState();
  const partition = full.partitions[0]!;
  return [
    full,
    // Every optional field present.
    sampleTableState({
      partitionSpec: {
        specId: 1,
        fields: [
          { sourceId: 3, fieldId: 1000, name: 'day', transform: 'day', column: 'ts' },
          { sourceId: 4, fieldId: 1001, name: 'b', transform: 'bucket[16]' },
        ],
      },
      sortOrder: { orderId: 0, fields: [] },
      snapshots: {
        total: 3,
        sinceLastExpire: 2,
        sinceLastRewrite: 1,
        oldestAt: '2025-12-20T00:00:00+02:00',
        newestAt: '2026-01-01T11:59:00Z',
        expiry: {
          mainOnly: 2,
          oldestMainOnlyAt: '2025-12-20T00:00:00.000Z',
          unreferenced: 1,
          oldestUnreferencedAt: '2025-12-19T00:00:00.000Z',
        },
      },
      newData: {
        sinceSnapshotId: '-9223372036854775808',
        sinceSequenceNumber: '9223372036854775807',
        files: 0,
        records: 0,
        bytes: 0,
        share: 1,
      },
      refs: [
        { name: 'main', type: 'branch', snapshotId: '1', maxRefAgeMs: 0, minSnapshotsToKeep: 3 },
        { name: 'v1', type: 'tag', snapshotId: '2', maxSnapshotAgeMs: 86_400_000 },
      ],
      partitions: Array.from({ length: listed }, (_, i) => ({
        ...partition,
        specId: i % 2,
        partition: partitionValues(i),
        smallFileBytes: i * MiB,
        deleteFileBytes: 0,
        lastSequenceNumber: String(1000 - i),
        lastChangedAt: '2026-01-01T00:00:00.123456Z',
      })),
      partitionTotals: { partitions: 1000, needingWork: 200, listed: 100 },
      otherPartitionSpecs: [{ specId: 0, fields: [] }],
      lastMaintenance: {
        cleanup: '2025-12-31T00:00:00.000Z',
        merge: '2025-12-31T00:00:00.000Z',
        sort: '2025-12-31T00:00:00.000Z',
        orphans: '2025-12-31T00:00:00.000Z',
      },
      properties: {},
      currentSnapshotId: null,
      formatVersion: 3,
    }),
    // A brand-new empty table, no optional field (`json` leaves out the undefined).
    {
      ...sampleTableState({ formatVersion: 1, currentSnapshotId: null, lastSequenceNumber: '0' }),
      sizeHistogram: [],
      refs: [],
      partitions: [],
      snapshots: { total: 0, sinceLastRewrite: 0 },
      newData: { sinceSnapshotId: null, files: 0, records: 0, bytes: 0, share: 0 },
      lastMaintenance: undefined,
    },
  ];
}

const json = (value: unknown): Json => JSON.parse(JSON.stringify(value)) as Json;

/** Every path to a value in `value` (objects and arrays walked), root excluded. */
function paths(value: Json, at: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = [];
  if (Array.isArray(value)) value.forEach((v, i) => out.push([...at, i], ...paths(v, [...at, i])));
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) out.push([...at, k], ...paths(v, [...at, k]));
  return out;
}

/** Arrays and objects, indexed alike (a JSON value's containers). */
type Container = Record<string | number, Json> & { splice?: Json[]['splice'] };

function withAt(
  root: Json,
  path: readonly (string | number)[],
  f: (parent: Container, key: string | number) => void,
) {
  const copy = json(root);
  let parent = copy as Container;
  for (const key of path.slice(0, -1)) parent = parent[key] as Container;
  f(parent, path.at(-1)!);
  return copy;
}

/** Values of the wrong type or out of every bound the schema has. */
const REPLACEMENTS: Json[] = [
  null,
  true,
  '',
  'x',
  '2026-01-01',
  '2026-02-30T00:00:00Z',
  '01',
  '-0',
  ' 1',
  '9223372036854775808',
  '-9223372036854775809',
  '12345678901234567890123',
  0,
  -1,
  -0,
  1.5,
  2,
  0.5,
  2 ** 53,
  -(2 ** 53),
  12345678901234567000,
  1e300,
  [],
  ['x'],
  {},
  { x: 'y' },
  'label',
  'nulls-last',
  'tag',
];

/** The state, and each mutation of it: every value replaced, removed, an extra key, arrays grown. */
function* mutations(state: TableState | Json): Generator<Json> {
  const root = json(state);
  yield root;
  // The first partitions stand for the rest.
  for (const path of paths(root).filter((p) => p[0] !== 'partitions' || Number(p[1] ?? 0) < 3)) {
    for (const replacement of REPLACEMENTS)
      yield withAt(root, path, (p, k) => {
        p[k] = json(replacement);
      });
    yield withAt(root, path, (p, k) => {
      if (Array.isArray(p)) p.splice(k as number, 1);
      else delete p[k];
    });
    yield withAt(root, path, (p, k) => {
      const v = p[k];
      if (Array.isArray(v)) {
        // Beyond the schema's bound where it has one (100 partitions).
        while (v.length > 0 && v.length <= MAX_TABLE_STATE_PARTITIONS) v.push(json(v[0]));
      } else if (v !== null && typeof v === 'object') v['extra'] = 'x';
    });
    yield withAt(root, path, (p, k) => {
      const v = p[k];
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) ownProto(v);
    });
  }
  const top = json(root) as object;
  ownProto(top);
  yield top as Json;
}

/** An own key named `__proto__`, as JSON.parse makes one. */
function ownProto(o: object): void {
  Object.defineProperty(o, '__proto__', {
    value: 'x',
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

describe('isExactTableState', () => {
  it('agrees with tableStateSchema: true only where the schema accepts the value unchanged', () => {
    let tried = 0;
    let refusedBySchema = 0;
    let vouched = 0;
    const disagreements: string[] = [];
    for (const state of corpus())
      for (const value of mutations(state)) {
        tried++;
        const exact = isExactTableState(value);
        const parsed = tableStateSchema.safeParse(value);
        if (!parsed.success) refusedBySchema++;
        else if (exact) vouched++;
        // Vouched for: the schema accepts it unchanged. Refused though valid: only when the
        // schema would change it (a default filled in, a key stripped).
        if (exact !== (parsed.success && same(parsed.data, value)))
          disagreements.push(JSON.stringify(value));
      }
    expect(disagreements).toEqual([]);
    // The mutations were real: the schema refused most, and the check vouched for many.
    expect(tried).toBeGreaterThan(5_000);
    expect(refusedBySchema).toBeGreaterThan(tried / 2);
    expect(vouched).toBeGreaterThan(100);
  }, 60_000);

  it('vouches for every valid state of the corpus', () => {
    for (const state of corpus()) expect(isExactTableState(json(state))).toBe(true);
  });

  it('vouches for the most partitions a state lists, and not one more', () => {
    const most = json(corpus(MAX_TABLE_STATE_PARTITIONS)[1]) as { partitions: Json[] };
    expect(isExactTableState(most)).toBe(true);
    most.partitions.push(most.partitions[0]!);
    expect(isExactTableState(most)).toBe(false);
    expect(tableStateSchema.safeParse(most).success).toBe(false);
  });

  it('leaves a state of an older scanner (no danglingDeletes) to the schema, which fills it in', () => {
    const old = json(sampleTableState()) as { files: Record<string, Json> };
    delete old.files.danglingDeletes;
    expect(isExactTableState(old)).toBe(false);
    expect(tableStateSchema.parse(old).files.danglingDeletes).toEqual({
      positionDeleteFiles: 0,
      equalityDeleteFiles: 0,
      deletionVectors: 0,
    });
  });
});

describe('parseMessage of TableScanned', () => {
  afterEach(() => vi.restoreAllMocks());

  const key = 'prod/sales/orders';
  // As the planner's consumer asks (the only type it handles on the topic).
  const scanned = [MessageType.TableScanned];
  const envelope = createEnvelope(MessageType.TableScanned, key, sampleTableState());
  const message = (payload: Json, version = 1) => stringifyJson({ ...envelope, version, payload });

  it('does not run the schema on a valid state (issue 17 point 6)', () => {
    const parse = vi.spyOn(tableStateSchema, 'safeParse');
    const text = message(json(sampleTableState()));
    expect(parseMessage(text, scanned).payload).toStrictEqual(
      tableStateSchema.parse((JSON.parse(text) as { payload: unknown }).payload),
    );
    parse.mockClear();
    parseMessage(text);
    parseMessage(text, scanned);
    expect(parse).not.toHaveBeenCalled();
  });

  /** The messages of `values` whose parse differs from the schema's path, either way asked. */
  const differing = (values: Iterable<Json>, version: number): string[] => {
    const differ: string[] = [];
    for (const value of values) {
      const text = message(value, version);
      const viaSchema = outcome(() => parseEnvelope(parseJsonExact(text), scanned));
      for (const types of [scanned, undefined])
        if (
          !same(
            outcome(() => parseMessage(text, types)),
            viaSchema,
          )
        )
          differ.push(text);
    }
    return differ;
  };

  it('gives what the schema gives for every mutation: the same payload or the same error text', () => {
    expect(differing(mutations(corpus()[0]!), 1)).toEqual([]);
  }, 60_000);

  it('version 2 (the list packed) too: the same payload or the same error text', () => {
    expect(differing(mutations(json(packTableState(corpus(3)[1]!))), 2)).toEqual([]);
  }, 60_000);
});

function outcome(f: () => { payload: unknown }): { payload: unknown } | { error: string } {
  try {
    return { payload: f().payload };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/**
 * Deep equality of JSON-like values (cheaper than `toStrictEqual` over thousands): the same
 * own keys, values and prototypes; key order aside.
 */
function same(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every(
    (k) =>
      Object.hasOwn(b, k) &&
      same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}
