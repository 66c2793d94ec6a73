import { randomBytes } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import avsc from 'avsc';
import { encodeZigZag, exactLongHook } from '../manifest/exact-long.ts';

export interface AvroContainerOptions {
  /** Default: `deflate` (what Iceberg writes by default). */
  readonly codec?: 'null' | 'deflate';
  /** Extra header metadata (Iceberg writes `schema`, `partition-spec`, `format-version` …). */
  readonly metadata?: Readonly<Record<string, string>>;
  /** Default: 1000. */
  readonly recordsPerBlock?: number;
}

const headerType = avsc.Type.forSchema({ type: 'map', values: 'bytes' });

/** Writes an Avro object container file in memory, as Iceberg's writers would. */
export function encodeAvroContainer(
  schema: object,
  records: readonly unknown[],
  options: AvroContainerOptions = {},
): Buffer {
  const type = avsc.Type.forSchema(schema as avsc.Schema, {
    typeHook: exactLongHook,
    wrapUnions: 'auto',
  });
  const codec = options.codec ?? 'deflate';
  const meta: Record<string, Buffer> = {
    'avro.schema': Buffer.from(JSON.stringify(schema)),
    'avro.codec': Buffer.from(codec),
  };
  for (const [k, v] of Object.entries(options.metadata ?? {})) meta[k] = Buffer.from(v);
  const sync = randomBytes(16);
  const parts: Buffer[] = [Buffer.from('Obj\x01', 'latin1'), headerType.toBuffer(meta), sync];
  const perBlock = options.recordsPerBlock ?? 1000;
  for (let i = 0; i < records.length; i += perBlock) {
    const chunk = records.slice(i, i + perBlock);
    const raw = Buffer.concat(chunk.map((r) => type.toBuffer(r)));
    const data = codec === 'deflate' ? deflateRawSync(raw) : raw;
    parts.push(encodeZigZag(chunk.length), encodeZigZag(data.length), data, sync);
  }
  return Buffer.concat(parts);
}
