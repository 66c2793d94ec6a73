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

/** The avsc type used for every `long` of a manifest schema (via `typeHook`). */
export const exactLongType = avsc.types.LongType.__with(
  {
    fromBuffer: (buf: Buffer) => decodeZigZag(buf),
    toBuffer: (value: ExactLong | bigint) => encodeZigZag(value),
    fromJSON: (value: ExactLong) => value,
    toJSON: (value: ExactLong) => value,
    isValid: isExactLong,
    compare: (a: ExactLong, b: ExactLong) => {
      const x = BigInt(a);
      const y = BigInt(b);
      return x < y ? -1 : x > y ? 1 : 0;
    },
  },
  // No unpacking: fromBuffer sees the raw varint bytes, which is cheaper than 8-byte form.
  true,
);

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
