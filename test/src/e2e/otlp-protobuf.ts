/**
 * OTLP trace export requests, decoded from the protobuf encoding into the shape of the JSON
 * encoding (ids as hex), so the test receiver keeps one path for both. The services' JS
 * exporter sends JSON; the Spark job's Python exporter (`opentelemetry-exporter-otlp-proto-http`)
 * sends protobuf. Only the fields the tests read are decoded; the rest is skipped.
 *
 * Field numbers: opentelemetry-proto, `collector/trace/v1/trace_service.proto`,
 * `trace/v1/trace.proto`, `resource/v1/resource.proto`, `common/v1/common.proto`.
 */

export interface OtlpAttribute {
  readonly key: string;
  readonly value: Readonly<Record<string, unknown>>;
}

export interface OtlpSpan {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly attributes?: readonly OtlpAttribute[];
  /** `code`: 0 unset, 1 ok, 2 error. */
  readonly status?: { readonly code?: number; readonly message?: string };
}

export interface OtlpTraces {
  readonly resourceSpans?: readonly {
    readonly resource?: { readonly attributes?: readonly OtlpAttribute[] };
    readonly scopeSpans?: readonly { readonly spans?: readonly OtlpSpan[] }[];
  }[];
}

/** Protobuf wire types. */
const Wire = { varint: 0, fixed64: 1, bytes: 2, fixed32: 5 } as const;

/** The fields of one protobuf message, in order: (field number, wire type, value reader). */
function* fields(buf: Uint8Array): Generator<{ field: number; wire: number; reader: Reader }> {
  const reader = new Reader(buf);
  while (!reader.done) {
    const tag = reader.varint();
    yield { field: Number(tag >> 3n), wire: Number(tag & 7n), reader };
  }
}

class Reader {
  #pos = 0;
  readonly #buf: Uint8Array;

  constructor(buf: Uint8Array) {
    this.#buf = buf;
  }

  get done(): boolean {
    return this.#pos >= this.#buf.length;
  }

  varint(): bigint {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (this.done) throw new Error('protobuf: truncated varint');
      const byte = this.#buf[this.#pos++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
    }
  }

  bytes(): Uint8Array {
    const length = Number(this.varint());
    if (this.#pos + length > this.#buf.length) throw new Error('protobuf: truncated field');
    const out = this.#buf.subarray(this.#pos, this.#pos + length);
    this.#pos += length;
    return out;
  }

  fixed(size: 4 | 8): DataView {
    if (this.#pos + size > this.#buf.length) throw new Error('protobuf: truncated field');
    const view = new DataView(this.#buf.buffer, this.#buf.byteOffset + this.#pos, size);
    this.#pos += size;
    return view;
  }

  skip(wire: number): void {
    if (wire === Wire.varint) this.varint();
    else if (wire === Wire.fixed64) this.fixed(8);
    else if (wire === Wire.bytes) this.bytes();
    else if (wire === Wire.fixed32) this.fixed(4);
    else throw new Error(`protobuf: unsupported wire type ${String(wire)}`);
  }
}

const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('utf8');
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

function anyValue(buf: Uint8Array): Record<string, unknown> {
  for (const { field, wire, reader } of fields(buf)) {
    if (field === 1 && wire === Wire.bytes) return { stringValue: text(reader.bytes()) };
    if (field === 2 && wire === Wire.varint) return { boolValue: reader.varint() !== 0n };
    if (field === 3 && wire === Wire.varint)
      return { intValue: Number(BigInt.asIntN(64, reader.varint())) };
    if (field === 4 && wire === Wire.fixed64)
      return { doubleValue: reader.fixed(8).getFloat64(0, true) };
    if (field === 5 && wire === Wire.bytes) return { arrayValue: arrayValue(reader.bytes()) };
    reader.skip(wire); // key-value lists, bytes: not read by the tests
  }
  return {};
}

/** `ArrayValue { repeated AnyValue values = 1 }` (the Spark job's batch span lists task ids). */
function arrayValue(buf: Uint8Array): { values: Record<string, unknown>[] } {
  const values: Record<string, unknown>[] = [];
  for (const { field, wire, reader } of fields(buf)) {
    if (field === 1 && wire === Wire.bytes) values.push(anyValue(reader.bytes()));
    else reader.skip(wire);
  }
  return { values };
}

function keyValue(buf: Uint8Array): OtlpAttribute {
  let key = '';
  let value: Record<string, unknown> = {};
  for (const { field, wire, reader } of fields(buf)) {
    if (field === 1 && wire === Wire.bytes) key = text(reader.bytes());
    else if (field === 2 && wire === Wire.bytes) value = anyValue(reader.bytes());
    else reader.skip(wire);
  }
  return { key, value };
}

function attributesOf(buf: Uint8Array, attributeField: number): OtlpAttribute[] {
  const out: OtlpAttribute[] = [];
  for (const { field, wire, reader } of fields(buf)) {
    if (field === attributeField && wire === Wire.bytes) out.push(keyValue(reader.bytes()));
    else reader.skip(wire);
  }
  return out;
}

function status(buf: Uint8Array): { code: number; message: string } {
  let code = 0;
  let message = '';
  for (const { field, wire, reader } of fields(buf)) {
    if (field === 2 && wire === Wire.bytes) message = text(reader.bytes());
    else if (field === 3 && wire === Wire.varint) code = Number(reader.varint());
    else reader.skip(wire);
  }
  return { code, message };
}

function span(buf: Uint8Array): OtlpSpan {
  let traceId = '';
  let spanId = '';
  let parentSpanId = '';
  let name = '';
  let spanStatus: OtlpSpan['status'];
  const attributes: OtlpAttribute[] = [];
  for (const { field, wire, reader } of fields(buf)) {
    if (wire !== Wire.bytes) reader.skip(wire);
    else if (field === 1) traceId = hex(reader.bytes());
    else if (field === 2) spanId = hex(reader.bytes());
    else if (field === 4) parentSpanId = hex(reader.bytes());
    else if (field === 5) name = text(reader.bytes());
    else if (field === 9) attributes.push(keyValue(reader.bytes()));
    else if (field === 15) spanStatus = status(reader.bytes());
    else reader.skip(wire);
  }
  return {
    name,
    traceId,
    spanId,
    ...(parentSpanId === '' ? {} : { parentSpanId }),
    attributes,
    ...(spanStatus === undefined ? {} : { status: spanStatus }),
  };
}

/** A serialized `ExportTraceServiceRequest`, as OTLP JSON. Throws on malformed input. */
export function decodeTraceRequest(buf: Uint8Array): OtlpTraces {
  const resourceSpans = [];
  for (const top of fields(buf)) {
    if (top.field !== 1 || top.wire !== Wire.bytes) {
      top.reader.skip(top.wire);
      continue;
    }
    let resource: { attributes: OtlpAttribute[] } = { attributes: [] };
    const scopeSpans: { spans: OtlpSpan[] }[] = [];
    for (const { field, wire, reader } of fields(top.reader.bytes())) {
      if (field === 1 && wire === Wire.bytes) {
        resource = { attributes: attributesOf(reader.bytes(), 1) };
      } else if (field === 2 && wire === Wire.bytes) {
        const spans: OtlpSpan[] = [];
        for (const scope of fields(reader.bytes())) {
          if (scope.field === 2 && scope.wire === Wire.bytes)
            spans.push(span(scope.reader.bytes()));
          else scope.reader.skip(scope.wire);
        }
        scopeSpans.push({ spans });
      } else {
        reader.skip(wire);
      }
    }
    resourceSpans.push({ resource, scopeSpans });
  }
  return { resourceSpans };
}
