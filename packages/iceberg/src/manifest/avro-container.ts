import { inflateRawSync, zstdDecompressSync } from 'node:zlib';
import avsc from 'avsc';
import { IcebergError, IcebergErrorKind } from '../errors/iceberg-error.ts';

const MAGIC = Buffer.from([0x4f, 0x62, 0x6a, 0x01]); // "Obj" 1
const SYNC_SIZE = 16;
const headerMetaType = avsc.Type.forSchema({ type: 'map', values: 'bytes' });

export interface AvroBlock {
  readonly count: number;
  /** Decompressed records. */
  readonly data: Buffer;
}

export interface AvroContainer {
  /** File metadata (`avro.schema`, `avro.codec`, Iceberg's `partition-spec`, `format-version` …). */
  readonly metadata: ReadonlyMap<string, string>;
  readonly schemaText: string;
  readonly blocks: readonly AvroBlock[];
}

function corrupt(file: string, message: string, cause?: unknown): IcebergError {
  return new IcebergError(IcebergErrorKind.corruptFile, `corrupt Avro file: ${message}`, {
    file,
    ...(cause === undefined ? {} : { cause }),
  });
}

/** Reads a zig-zag varint long (block counts and sizes are small: plain arithmetic). */
function readLong(buf: Buffer, pos: number, file: string): [number, number] {
  let n = 0;
  let scale = 1;
  let byte: number;
  do {
    if (pos >= buf.length) throw corrupt(file, 'truncated block header');
    byte = buf[pos++]!;
    n += (byte & 0x7f) * scale;
    scale *= 128;
  } while (byte & 0x80 && scale < 2 ** 53);
  return [n % 2 === 0 ? n / 2 : -(n + 1) / 2, pos];
}

/**
 * Most bytes one Avro file (manifest, manifest list) may decompress to: 256 MiB, far above
 * what Iceberg writes (8 MiB manifests by default) and small enough that a decompression
 * bomb from a hostile catalog cannot exhaust the scanner's memory.
 */
export const MAX_AVRO_DECOMPRESSED_BYTES = 256 * 2 ** 20;

const CHUNK = 64 * 1024;

function decompress(codec: string, data: Buffer, file: string, budget: number): Buffer {
  const tooLarge = (): IcebergError =>
    corrupt(
      file,
      `decompresses to more than ${String(budget)} more bytes (the limit per file is reached: a damaged or hostile file)`,
    );
  let out: Buffer;
  try {
    switch (codec) {
      case 'null':
        out = data;
        break;
      case 'deflate':
        // Blocks are ~64 KiB decompressed (Iceberg Java's default): one output chunk, no concat.
        out = inflateRawSync(data, { maxOutputLength: Math.max(1, budget), chunkSize: CHUNK });
        break;
      case 'zstandard':
        out = zstdDecompressSync(data, { maxOutputLength: Math.max(1, budget) });
        break;
      default:
        throw new IcebergError(IcebergErrorKind.unsupported, `unsupported Avro codec "${codec}"`, {
          file,
        });
    }
  } catch (error) {
    if (error instanceof IcebergError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge();
    throw corrupt(file, `cannot ${codec}-decompress a block`, error);
  }
  if (out.length > budget) throw tooLarge();
  return out;
}

/**
 * Splits an Avro object container file into its header and decompressed blocks. Any
 * structural damage (bad magic, truncated block, wrong sync marker) is a `corrupt-file`
 * error naming the file.
 */
export function readAvroContainer(
  bytes: Uint8Array,
  file: string,
  maxDecompressedBytes = MAX_AVRO_DECOMPRESSED_BYTES,
): AvroContainer {
  const buf = Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < MAGIC.length || !buf.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw corrupt(file, 'not an Avro object container file (bad magic)');
  }
  let decoded: { value: Record<string, Buffer>; offset: number };
  try {
    decoded = headerMetaType.decode(buf, MAGIC.length);
  } catch (error) {
    throw corrupt(file, 'unreadable header', error);
  }
  if (decoded.offset < 0 || decoded.offset + SYNC_SIZE > buf.length)
    throw corrupt(file, 'truncated header');
  const metadata = new Map<string, string>();
  for (const [key, value] of Object.entries(decoded.value))
    metadata.set(key, value.toString('utf8'));
  const schemaText = metadata.get('avro.schema');
  if (schemaText === undefined) throw corrupt(file, 'no avro.schema in the header');
  const codec = metadata.get('avro.codec') ?? 'null';
  const sync = buf.subarray(decoded.offset, decoded.offset + SYNC_SIZE);

  const blocks: AvroBlock[] = [];
  let budget = maxDecompressedBytes;
  let pos = decoded.offset + SYNC_SIZE;
  while (pos < buf.length) {
    let count: number;
    let size: number;
    [count, pos] = readLong(buf, pos, file);
    [size, pos] = readLong(buf, pos, file);
    if (count < 0 || size < 0 || pos + size + SYNC_SIZE > buf.length) {
      throw corrupt(file, `truncated block at byte ${pos}`);
    }
    const data = decompress(codec, buf.subarray(pos, pos + size), file, budget);
    budget -= data.length;
    pos += size;
    if (!buf.subarray(pos, pos + SYNC_SIZE).equals(sync))
      throw corrupt(file, `bad sync marker at byte ${pos}`);
    pos += SYNC_SIZE;
    blocks.push({ count, data });
  }
  return { metadata, schemaText, blocks };
}

/**
 * Decodes the `count` records of a block with a resolver (reader schema ⊂ writer schema),
 * calling `onRecord` for each. A record that runs past the block is a corrupt file.
 */
export function decodeBlock<T>(
  block: AvroBlock,
  reader: avsc.Type,
  resolver: avsc.Resolver,
  file: string,
  onRecord: (record: T) => void,
): void {
  let pos = 0;
  for (let i = 0; i < block.count; i++) {
    let result: { value: unknown; offset: number };
    try {
      result = reader.decode(block.data, pos, resolver);
    } catch (error) {
      throw corrupt(file, `undecodable record ${i} of a block`, error);
    }
    if (result.offset < 0) throw corrupt(file, `truncated record ${i} of a block`);
    pos = result.offset;
    onRecord(result.value as T);
  }
}
