import avsc from 'avsc';

/**
 * An Avro long decoded exactly: a JS number when it is a safe integer (counts, sizes),
 * otherwise its decimal string (63-bit snapshot ids). avsc's own long refuses unsafe values.
 */
export type ExactLong = number | string;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = -MAX_SAFE;

/** Zig-zag varint bytes → value. Up to 7 bytes carry at most 49 bits: plain arithmetic. */
export function decodeZigZag(bytes: Uint8Array): ExactLong {
  const length = bytes.length;
  if (length <= 7) {
    let n = 0;
    let scale = 1;
    for (let i = 0; i < length; i++) {
      n += (bytes[i]! & 0x7f) * scale;
      scale *= 128;
    }
    return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
  }
  let n = 0n;
  let shift = 0n;
  for (let i = 0; i < length; i++) {
    n |= BigInt(bytes[i]! & 0x7f) << shift;
    shift += 7n;
  }
  const value = (n & 1n) === 0n ? n >> 1n : -((n + 1n) >> 1n);
  return value <= MAX_SAFE && value >= MIN_SAFE ? Number(value) : value.toString();
}

/** Value → zig-zag varint bytes (for writing test and benchmark files). */
export function encodeZigZag(value: ExactLong | bigint): Buffer {
  const v = BigInt(value);
  let n = v >= 0n ? v << 1n : (-v << 1n) - 1n;
  const out: number[] = [];
  do {
    let byte = Number(n & 0x7fn);
    n >>= 7n;
    if (n !== 0n) byte |= 0x80;
    out.push(byte);
  } while (n !== 0n);
  return Buffer.from(out);
}

function isExactLong(value: unknown): boolean {
  if (typeof value === 'number') return Number.isSafeInteger(value);
  if (typeof value === 'bigint') return true;
  return typeof value === 'string' && /^-?\d+$/.test(value);
}

/** A read position in a buffer (avsc's tap, the entry scanner's cursor). */
export interface Tap {
  buf: Uint8Array;
  pos: number;
}

/**
 * Reads a long straight from avsc's tap: no buffer slice per value. Up to 7 varint bytes
 * (49 bits) are plain arithmetic; only longer values (63-bit ids) go through BigInt once.
 * Past the end of the buffer the tap's position ends up beyond it, which avsc reports as a
 * truncated record.
 */
export function readExactLong(tap: Tap): ExactLong {
  const buf = tap.buf;
  let pos = tap.pos;
  let lo = 0;
  let scale = 1;
  let byte = 0;
  let i = 0;
  do {
    byte = buf[pos++] ?? 0;
    lo += (byte & 0x7f) * scale;
    scale *= 128;
    i++;
  } while (byte & 0x80 && i < 7);
  if ((byte & 0x80) === 0) {
    tap.pos = pos > buf.length ? buf.length + 1 : pos;
    return lo % 2 === 0 ? lo / 2 : -(lo + 1) / 2;
  }
  let hi = 0;
  scale = 1;
  do {
    byte = buf[pos++] ?? 0;
    hi += (byte & 0x7f) * scale;
    scale *= 128;
  } while (byte & 0x80);
  tap.pos = pos > buf.length ? buf.length + 1 : pos;
  // Big values are snapshot ids and sequence numbers: few distinct ones, repeated per entry.
  for (let k = 0; k < RECENT; k++) {
    if (recentHi[k] === hi && recentLo[k] === lo) return recentValue[k]!;
  }
  const value = bigLong(hi, lo);
  recentHi[next] = hi;
  recentLo[next] = lo;
  recentValue[next] = value;
  next = (next + 1) % RECENT;
  return value;
}

const RECENT = 4;
const recentHi = new Array<number>(RECENT).fill(-1);
const recentLo = new Array<number>(RECENT).fill(-1);
const recentValue = new Array<ExactLong>(RECENT).fill(0);
let next = 0;

function bigLong(hi: number, lo: number): ExactLong {
  const n = (BigInt(hi) << 49n) | BigInt(lo);
  const value = (n & 1n) === 0n ? n >> 1n : -((n + 1n) >> 1n);
  return value <= MAX_SAFE && value >= MIN_SAFE ? Number(value) : value.toString();
}

const compare = (a: ExactLong, b: ExactLong): number => {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
};

/** The avsc type used for every `long` of a manifest schema (via `typeHook`). */
export const exactLongType: avsc.Type = (() => {
  // avsc's own custom-long hook (`LongType.__with`) slices a buffer per value; build the same
  // kind of type (its constructor is not exported) and read from the tap directly.
  const template = avsc.types.LongType.__with(
    {
      fromBuffer: decodeZigZag,
      toBuffer: encodeZigZag,
      fromJSON: (v: ExactLong) => v,
      toJSON: (v: ExactLong) => v,
      isValid: isExactLong,
      compare,
    },
    true,
  );
  const AbstractLong = (Object.getPrototypeOf(template) as { constructor: unknown })
    .constructor as new (noUnpack: boolean) => Record<string, unknown>;
  const type = new AbstractLong(true);
  Object.assign(type, {
    _fromBuffer: decodeZigZag,
    _toBuffer: encodeZigZag,
    _fromJSON: (v: ExactLong) => v,
    _toJSON: (v: ExactLong) => v,
    _isValid: isExactLong,
    compare,
    _read: readExactLong,
  });
  return Object.freeze(type) as unknown as avsc.Type;
})();

/** `typeHook` for `Type.forSchema`: every long (plain or with a logical type) is exact. */
export function exactLongHook(schema: unknown): avsc.Type | undefined {
  if (schema === 'long') return exactLongType;
  if (
    typeof schema === 'object' &&
    schema !== null &&
    (schema as { type?: unknown }).type === 'long'
  ) {
    return exactLongType;
  }
  return undefined;
}
