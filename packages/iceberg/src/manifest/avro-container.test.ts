import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { icebergErrorOf } from '../testing/iceberg-error-of.ts';
import { encodeAvroContainer } from '../testing/avro-writer.ts';
import { MAX_AVRO_DECOMPRESSED_BYTES, readAvroContainer } from './avro-container.ts';
import { encodeZigZag } from './exact-long.ts';

const schema = { type: 'record', name: 'r', fields: [{ name: 's', type: 'string' }] };

/** A valid container whose one deflate block inflates to `size` bytes of zeros (a "bomb"). */
function bomb(size: number): Buffer {
  const valid = encodeAvroContainer(schema, [], { codec: 'deflate' });
  const sync = valid.subarray(valid.length - 16);
  const data = deflateRawSync(Buffer.alloc(size));
  return Buffer.concat([valid, encodeZigZag(1), encodeZigZag(data.length), data, sync]);
}

describe('readAvroContainer: decompression cap', () => {
  it('has a documented default of 256 MiB per file', () => {
    expect(MAX_AVRO_DECOMPRESSED_BYTES).toBe(256 * 2 ** 20);
  });

  it('reads a file that stays under the cap', () => {
    const bytes = encodeAvroContainer(schema, [{ s: 'x'.repeat(1000) }], { codec: 'deflate' });
    const container = readAvroContainer(bytes, 'file:/t/ok.avro', 4096);
    expect(container.blocks.reduce((n, b) => n + b.data.length, 0)).toBeGreaterThan(1000);
  });

  it('stops a block that inflates past the cap with a corrupt-file error naming the file', () => {
    const bytes = bomb(1 << 20);
    expect(bytes.length).toBeLessThan(8 * 1024); // 1 MiB of zeros deflates to ~1 KiB
    const error = icebergErrorOf(() => readAvroContainer(bytes, 'file:/t/bomb.avro', 64 * 1024));
    expect(error.kind).toBe('corrupt-file');
    expect(error.context.file).toBe('file:/t/bomb.avro');
    expect(error.message).toMatch(/decompresses to more than 65536 more bytes/);
  });

  it('counts every block of the file against one budget', () => {
    const records = Array.from({ length: 40 }, (_, i) => ({
      s: `${String(i)}${'y'.repeat(1000)}`,
    }));
    const bytes = encodeAvroContainer(schema, records, { codec: 'deflate', recordsPerBlock: 4 });
    // Each block is ~4 KiB; ten of them pass a 64 KiB budget, not a 16 KiB one.
    expect(readAvroContainer(bytes, 'file:/t/m.avro', 64 * 1024).blocks).toHaveLength(10);
    expect(
      icebergErrorOf(() => readAvroContainer(bytes, 'file:/t/m.avro', 16 * 1024)).message,
    ).toMatch(/limit per file/);
  });

  it('applies the cap to uncompressed files too', () => {
    const bytes = encodeAvroContainer(schema, [{ s: 'z'.repeat(10_000) }], { codec: 'null' });
    expect(icebergErrorOf(() => readAvroContainer(bytes, 'file:/t/n.avro', 1024)).kind).toBe(
      'corrupt-file',
    );
  });
});
