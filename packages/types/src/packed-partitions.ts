import { MAX_TABLE_STATE_PARTITIONS, type PartitionState, type TableState } from './table-state.ts';
import { ValidationError } from './validation-error.ts';

/**
 * A state's partition list packed: the keys once, a row of values per partition (a key a
 * partition lacks is null in its row). For 100 partitions ~10 KB instead of ~25 KB. The
 * planner stores states so (ADR 0034) and `TableScanned` version 2 carries them so (ADR 0050):
 * the planner stores the bytes it was sent. A row's `partition` stays an object: its keys are
 * the spec's field names, which differ between specs.
 */
export interface PackedPartitions {
  readonly keys: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
}

/**
 * {@link PackedPartitions} of the list, or undefined when a partition has a null value at its
 * top level: a row could not tell it from an absent key (no field is nullable today).
 */
export function packPartitions(
  partitions: readonly PartitionState[],
): PackedPartitions | undefined {
  const keys: string[] = [];
  const column = new Map<string, number>();
  const rows: unknown[][] = [];
  for (const p of partitions) {
    const row: unknown[] = [];
    // (for…in, not Object.entries: no array of pairs per partition; the objects are plain.)
    let next = 0;
    for (const key in p) {
      const value = (p as unknown as Record<string, unknown>)[key];
      if (value === undefined) continue;
      if (value === null) return undefined;
      // Nearly always the key that follows the previous one in `keys` (the scanner writes every
      // partition's keys in one order): no lookup, and the row grows by a push (issue 17).
      let at = keys[next] === key ? next : column.get(key);
      if (at === undefined) {
        at = keys.length;
        column.set(key, at);
        keys.push(key);
      }
      while (row.length < at) row.push(null);
      if (at === row.length) row.push(value);
      else row[at] = value;
      next = at + 1;
    }
    rows.push(row);
  }
  // A row made before a later partition added a key is short: JSON has no holes, pad it.
  for (const row of rows) while (row.length < keys.length) row.push(null);
  return { keys, rows };
}

/**
 * The keys the scanner packs, in its order: every `PartitionState` member, in the schema's
 * order. A list packed with exactly these is unpacked by {@link unpackFullRow}.
 */
const SCANNER_KEYS = [
  'specId',
  'partition',
  'dataFiles',
  'smallFiles',
  'deleteFiles',
  'bytes',
  'smallFileBytes',
  'deleteFileBytes',
  'lastSequenceNumber',
  'lastChangedAt',
] as const satisfies readonly (keyof PartitionState)[];

function scannerKeys(keys: readonly string[]): boolean {
  if (keys.length !== SCANNER_KEYS.length) return false;
  for (let i = 0; i < keys.length; i++) if (keys[i] !== SCANNER_KEYS[i]) return false;
  return true;
}

/**
 * A row of {@link SCANNER_KEYS} with a value for each as one object literal: ~5× as fast as a
 * store per key (16 µs → 4 µs for 100 partitions, a share of every state the planner reads;
 * issue 17). Undefined when a value is null or missing: that row is unpacked key by key (an
 * absent member must stay absent, not become a member holding `undefined`).
 */
function unpackFullRow(row: readonly unknown[]): PartitionState | undefined {
  for (let i = 0; i < SCANNER_KEYS.length; i++) if (row[i] === null || row[i] === undefined) return;
  return {
    specId: row[0],
    partition: row[1],
    dataFiles: row[2],
    smallFiles: row[3],
    deleteFiles: row[4],
    bytes: row[5],
    smallFileBytes: row[6],
    deleteFileBytes: row[7],
    lastSequenceNumber: row[8],
    lastChangedAt: row[9],
  } as PartitionState;
}

/** The partition list {@link packPartitions} packed (not validated: a stored or checked list). */
export function unpackPartitions(packed: PackedPartitions): PartitionState[] {
  const { keys, rows } = packed;
  const out: PartitionState[] = [];
  const full = scannerKeys(keys);
  for (const row of rows) {
    const whole = full ? unpackFullRow(row) : undefined;
    if (whole !== undefined) {
      out.push(whole);
      continue;
    }
    const p: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      const value = row[i];
      if (value !== null && value !== undefined) p[keys[i]!] = value;
    }
    out.push(p as unknown as PartitionState);
  }
  return out;
}

/**
 * The `TableScanned` version 2 payload of a state: its members but `partitions`, then
 * `packedPartitions` last — the text the planner stores, member for member. Undefined when
 * the list cannot be packed (then the message is written as version 1).
 */
export function packTableState(state: TableState): Record<string, unknown> | undefined {
  const packedPartitions = packPartitions(state.partitions);
  if (packedPartitions === undefined) return undefined;
  const rest: Record<string, unknown> = { ...state };
  delete rest['partitions'];
  return { ...rest, packedPartitions };
}

/**
 * A version 2 `TableScanned` payload as a state to validate: its packed list unpacked. The
 * packed form itself is checked here (the fields it names are the wire's); the partitions'
 * values are left to the state's schema (`payload.partitions[i]…`).
 */
export function unpackTableState(payload: unknown): unknown {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return payload;
  const { packedPartitions, ...rest } = payload as Record<string, unknown>;
  const fail = (path: string, message: string) =>
    new ValidationError('TableScanned envelope', [
      { path: `payload.packedPartitions${path}`, message, code: 'invalid_type' },
    ]);
  if (typeof packedPartitions !== 'object' || packedPartitions === null)
    throw fail('', 'expected the packed partition list ({ keys, rows })');
  const { keys, rows } = packedPartitions as { keys?: unknown; rows?: unknown };
  if (!Array.isArray(keys)) throw fail('.keys', 'expected an array of partition field names');
  const seen = new Set<string>();
  for (const [i, key] of keys.entries()) {
    if (typeof key !== 'string' || key === '__proto__' || seen.has(key))
      throw fail(`.keys[${i}]`, 'expected a field name, once');
    seen.add(key);
  }
  if (!Array.isArray(rows)) throw fail('.rows', 'expected an array of rows');
  if (rows.length > MAX_TABLE_STATE_PARTITIONS)
    throw fail('.rows', `expected at most ${MAX_TABLE_STATE_PARTITIONS} rows`);
  for (const [i, row] of rows.entries())
    if (!Array.isArray(row) || row.length !== keys.length)
      throw fail(`.rows[${i}]`, `expected an array of ${keys.length} values (one per key)`);
  return {
    ...rest,
    partitions: unpackPartitions({ keys: keys as string[], rows: rows as unknown[][] }),
  };
}

/** Decoded state → its packed list as it came (see {@link packedPartitionsJson}). */
const packedJson = new WeakMap<object, string | Buffer>();

const PACKED_MEMBER = ',"packedPartitions":{"keys":';
const PACKED_MEMBER_BYTES = Buffer.from(PACKED_MEMBER);
const CLOSE = '}'.charCodeAt(0);

/**
 * Remembers, for a `TableScanned` version 2 payload that was parsed plainly and vouched for
 * exactly, the JSON of its `packedPartitions` member as the message carried it: the planner
 * stores it as it is instead of packing and serialising the list again (~0.1 ms a state,
 * issue 17). From the message's bytes, a view of those bytes: Redis is sent them without
 * encoding the text again (issue 17). Only when the message is laid out as
 * `serializeEnvelope` writes it (payload last, `packedPartitions` last in it, keys before
 * rows, no whitespace); otherwise nothing is remembered.
 */
export function keepPackedPartitionsJson(
  envelope: object,
  payload: object,
  sent: string | Uint8Array,
): void {
  const wire = (envelope as { payload?: unknown }).payload;
  if (typeof wire !== 'object' || wire === null) return;
  const packed = (wire as { packedPartitions?: unknown }).packedPartitions;
  if (
    lastKey(envelope) !== 'payload' ||
    lastKey(wire) !== 'packedPartitions' ||
    typeof packed !== 'object' ||
    packed === null ||
    Object.keys(packed).join() !== 'keys,rows'
  )
    return;
  // The last such member is the payload's: after it come only its rows, whose strings cannot
  // hold a quote unescaped and whose partition values are strings or null, never `{"keys":`.
  // (The member and the closing braces are ASCII: a byte offset is found as a character's.)
  const start = PACKED_MEMBER.length - '{"keys":'.length;
  if (typeof sent === 'string') {
    if (!sent.endsWith('}}}')) return;
    const at = sent.lastIndexOf(PACKED_MEMBER);
    if (at >= 0) packedJson.set(payload, sent.slice(at + start, -2));
    return;
  }
  const bytes = Buffer.from(sent.buffer, sent.byteOffset, sent.byteLength);
  const n = bytes.length;
  if (n < 3 || bytes[n - 1] !== CLOSE || bytes[n - 2] !== CLOSE || bytes[n - 3] !== CLOSE) return;
  const at = bytes.lastIndexOf(PACKED_MEMBER_BYTES);
  if (at >= 0) packedJson.set(payload, bytes.subarray(at + start, n - 2));
}

function lastKey(o: object): string | undefined {
  let last: string | undefined;
  for (const key in o) last = key;
  return last;
}

/**
 * The JSON of the state's packed partition list exactly as its message carried it (its text,
 * or a view of its UTF-8 bytes), when {@link keepPackedPartitionsJson} kept it; else undefined
 * (pack and serialise the list).
 */
export function packedPartitionsJson(state: TableState): string | Buffer | undefined {
  return packedJson.get(state);
}
