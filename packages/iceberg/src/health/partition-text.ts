import type { PartitionSpec, TableSchema } from '../metadata/table-model.ts';

const MS_PER_DAY = 86_400_000;

/** The type of a partition value: the transform's result type (spec "Partition Transforms"). */
function resultType(transform: string, sourceType: string | undefined): string {
  if (transform === 'identity' || transform.startsWith('truncate')) return sourceType ?? 'unknown';
  if (transform === 'day') return 'date';
  if (transform === 'void') return 'void';
  return 'int'; // year, month, hour, bucket[N]
}

function decimalText(bytes: Uint8Array, scale: number): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  if (bytes.length > 0 && (bytes[0]! & 0x80) !== 0) n -= 1n << BigInt(bytes.length * 8);
  const negative = n < 0n;
  const digits = (negative ? -n : n).toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

function uuidText(bytes: Uint8Array): string {
  const h = hex(bytes);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function timestampText(micros: number | string, withZone: boolean): string {
  const ms = Number(BigInt(micros) / 1000n);
  const iso = new Date(ms).toISOString();
  return withZone ? iso : iso.replace('Z', '');
}

/** One partition value as text, the way Spark's metadata tables show it. */
export function renderPartitionValue(value: unknown, type: string): string | null {
  if (value === null || value === undefined) return null;
  if (type === 'date' && typeof value === 'number') {
    return new Date(value * MS_PER_DAY).toISOString().slice(0, 10);
  }
  if (
    (type === 'timestamptz' || type === 'timestamp') &&
    (typeof value === 'number' || typeof value === 'string')
  ) {
    return timestampText(value, type === 'timestamptz');
  }
  if (value instanceof Uint8Array) {
    const decimal = /^decimal\(\s*\d+\s*,\s*(\d+)\s*\)$/.exec(type);
    if (decimal !== null) return decimalText(value, Number(decimal[1]));
    if (type === 'uuid' && value.length === 16) return uuidText(value);
    return hex(value);
  }
  // Avro primitives only: numbers, exact-long strings, booleans, strings.
  return primitiveText(value);
}

/** Text of an Avro primitive value (number, exact-long string, boolean, string). */
export function primitiveText(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'undefined':
      return '';
    case 'object':
    case 'function':
    case 'symbol':
      return JSON.stringify(value) ?? '';
  }
}

/** Renders a decoded partition tuple into field name → text, using the spec and schema. */
export function renderPartition(
  partition: Readonly<Record<string, unknown>>,
  spec: PartitionSpec | undefined,
  schema: TableSchema | undefined,
): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  if (spec === undefined) {
    for (const [name, value] of Object.entries(partition))
      out[name] = renderPartitionValue(value, 'unknown');
    return out;
  }
  // By position: Avro field names are sanitised copies of the spec's names (`a.b` → `a_x2Eb`).
  const values = Object.values(partition);
  spec.fields.forEach((field, i) => {
    const type = resultType(field.transform, schema?.columnTypes.get(field.sourceId));
    out[field.name] = renderPartitionValue(values[i], type);
  });
  return out;
}
