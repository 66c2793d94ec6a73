import { describe, expect, it } from 'vitest';
import { stringifyJson } from './json-exact.ts';
import { MessageType } from './message-types.ts';
import { createEnvelope, parseEnvelope, parseMessage, serializeEnvelope } from './messages.ts';
import { packedPartitionsJson, packPartitions, unpackPartitions } from './packed-partitions.ts';
import { sampleTableState } from './samples.ts';
import { MAX_TABLE_STATE_PARTITIONS, type PartitionState, type TableState } from './table-state.ts';

const day = (d: string, extra: Partial<PartitionState> = {}): PartitionState => ({
  specId: 1,
  partition: { region: 'eu', ts_day: d },
  dataFiles: 12,
  smallFiles: 8,
  deleteFiles: 0,
  bytes: 2048,
  smallFileBytes: 1024,
  lastSequenceNumber: '7',
  lastChangedAt: '2026-01-09T10:00:00.000Z',
  ...extra,
});

describe('packed partitions (the stored form of a state partition list)', () => {
  it('holds the keys once and gives back the same partitions, optional keys absent or present', () => {
    const partitions: PartitionState[] = [
      {
        specId: 0,
        partition: { region: null },
        dataFiles: 3,
        smallFiles: 3,
        deleteFiles: 0,
        bytes: 9,
      },
      day('2026-01-09'),
      day('2026-01-08', { deleteFiles: 2, deleteFileBytes: 300 }),
    ];
    const packed = packPartitions(partitions)!;
    expect(packed.keys).toEqual([
      'specId',
      'partition',
      'dataFiles',
      'smallFiles',
      'deleteFiles',
      'bytes',
      'smallFileBytes',
      'lastSequenceNumber',
      'lastChangedAt',
      'deleteFileBytes',
    ]);
    // Every row as long as the keys (the first partition had fewer).
    expect(packed.rows.map((r) => r.length)).toEqual([10, 10, 10]);
    const back = unpackPartitions(JSON.parse(JSON.stringify(packed)) as typeof packed);
    expect(back).toEqual(partitions);
    expect(back[0]).not.toHaveProperty('smallFileBytes');
    // A state's 100 listed partitions: under half the bytes.
    const hundred = Array.from({ length: 100 }, (_, i) => day(`2026-01-${i}`));
    const size = (x: unknown) => JSON.stringify(x).length;
    expect(size(packPartitions(hundred))).toBeLessThan(0.5 * size(hundred));
    expect(packPartitions([])).toEqual({ keys: [], rows: [] });
  });

  it('gives back partitions whose keys come in another order, or with keys left out', () => {
    const a = day('2026-01-09');
    const { specId, partition, ...rest } = day('2026-01-08', { deleteFileBytes: 5 });
    const reordered: PartitionState = { ...rest, partition, specId };
    const shorter = day('2026-01-07');
    delete shorter.lastChangedAt;
    const partitions = [a, reordered, shorter, day('2026-01-06')];
    const packed = packPartitions(partitions)!;
    expect(packed.rows.map((r) => r.length)).toEqual([10, 10, 10, 10]);
    expect(unpackPartitions(JSON.parse(JSON.stringify(packed)) as typeof packed)).toEqual(
      partitions,
    );
  });

  it("gives back the scanner's partitions member for member, in order, absent members absent", () => {
    // In the scanner's order (compute-table-state.ts), every member: the rows unpacked whole.
    const scanned = (d: string, known = true): PartitionState => ({
      specId: 1,
      partition: { region: 'eu', ts_day: d },
      dataFiles: 12,
      smallFiles: 8,
      deleteFiles: 1,
      bytes: 2048,
      smallFileBytes: 1024,
      deleteFileBytes: 16,
      // Absent when the partition's last snapshot was expired.
      ...(known ? { lastSequenceNumber: '7', lastChangedAt: '2026-01-09T10:00:00.000Z' } : {}),
    });
    const partitions = [scanned('2026-01-09'), scanned('2026-01-08', false), scanned('2026-01-07')];
    const packed = packPartitions(partitions)!;
    expect(packed.keys).toEqual(Object.keys(partitions[0]!));
    const back = unpackPartitions(JSON.parse(JSON.stringify(packed)) as typeof packed);
    expect(back).toEqual(partitions);
    expect(back.map((p) => Object.keys(p))).toEqual(partitions.map((p) => Object.keys(p)));
    expect(back[1]).not.toHaveProperty('lastSequenceNumber');
    expect(back[1]).not.toHaveProperty('lastChangedAt');
  });

  it('refuses a top-level null (a row could not tell it from an absent key)', () => {
    const odd = { ...day('2026-01-09'), lastChangedAt: null } as unknown as PartitionState;
    expect(packPartitions([day('2026-01-08'), odd])).toBeUndefined();
  });
});

describe('TableScanned version 2: the partition list packed on the wire (ADR 0050)', () => {
  const key = 'prod/sales/orders';
  const state = (partitions: PartitionState[]) => sampleTableState({ partitions });
  const hundred = Array.from({ length: MAX_TABLE_STATE_PARTITIONS }, (_, i) =>
    day(`2026-01-${i}`, i % 2 === 0 ? { deleteFiles: 1, deleteFileBytes: 5 } : {}),
  );
  const states = [
    sampleTableState(),
    state([]),
    state(hundred),
    state([{ ...day('x'), partition: { region: null, ts_day: '2026-01-01' } }]),
  ];
  const written = (s: TableState, version: number) =>
    serializeEnvelope(createEnvelope(MessageType.TableScanned, key, s, { version }));

  it('reads back the same state as version 1, from a message about half the size', () => {
    for (const s of states) {
      const v1 = written(s, 1);
      const v2 = written(s, 2);
      expect((JSON.parse(v2) as { version: number }).version).toBe(2);
      expect(parseMessage(v2).payload).toStrictEqual(parseMessage(v1).payload);
      expect(parseMessage(v2).payload).toStrictEqual(s);
      // And by the schema's path (a value not parsed from text).
      expect(parseEnvelope(JSON.parse(v2)).payload).toStrictEqual(s);
    }
    expect(written(state(hundred), 2).length).toBeLessThan(0.6 * written(state(hundred), 1).length);
  });

  it('writes version 1 when the list cannot be packed (a null where a row could not tell)', () => {
    const odd = { ...day('2026-01-09'), lastChangedAt: null } as unknown as PartitionState;
    const text = serializeEnvelope({
      ...createEnvelope(MessageType.TableScanned, key, sampleTableState(), { version: 2 }),
      payload: state([odd]),
    });
    expect((JSON.parse(text) as { version: number }).version).toBe(1);
  });

  it('refuses a version the type does not have', () => {
    expect(() =>
      createEnvelope(MessageType.TableScanned, key, sampleTableState(), { version: 3 }),
    ).toThrow('version: TableScanned has no version 3; this build accepts 1, 2');
  });

  it('names the field of a bad packed list, on the wire or in a row', () => {
    const envelope = JSON.parse(written(sampleTableState(), 2)) as {
      payload: { packedPartitions: { keys: unknown[]; rows: unknown[][] } };
    };
    const bad = (f: (p: { keys: unknown[]; rows: unknown[][] }) => void) => {
      const copy = structuredClone(envelope);
      f(copy.payload.packedPartitions);
      try {
        parseMessage(JSON.stringify(copy));
      } catch (error) {
        return (error as Error).message;
      }
      return 'accepted';
    };
    expect(bad((p) => (p.keys[1] = 7))).toBe(
      'invalid TableScanned envelope: payload.packedPartitions.keys[1]: expected a field name, once',
    );
    expect(bad((p) => (p.keys[1] = '__proto__'))).toContain('payload.packedPartitions.keys[1]');
    expect(bad((p) => (p.keys[1] = p.keys[0]))).toContain('payload.packedPartitions.keys[1]');
    expect(bad((p) => p.rows[0]!.pop())).toBe(
      `invalid TableScanned envelope: payload.packedPartitions.rows[0]: expected an array of ${envelope.payload.packedPartitions.keys.length} values (one per key)`,
    );
    expect(bad((p) => (p.rows = Array.from({ length: 101 }, () => p.rows[0]!)))).toContain(
      'payload.packedPartitions.rows: expected at most 100 rows',
    );
    const smallFiles = envelope.payload.packedPartitions.keys.indexOf('smallFiles');
    expect(bad((p) => (p.rows[0]![smallFiles] = -1))).toContain('payload.partitions[0].smallFiles');
    expect(bad((p) => (p.rows[0]![smallFiles] = null))).toContain(
      'payload.partitions[0].smallFiles',
    );
  });

  it('keeps the packed list text it was sent for the planner to store, only when it stands for it', () => {
    const s = state(hundred);
    const v2 = written(s, 2);
    const payload = parseMessage(v2).payload as TableState;
    expect(packedPartitionsJson(payload)).toBe(JSON.stringify(packPartitions(payload.partitions)));
    // The bytes as sent: a number written otherwise stays as it was written.
    const other = v2.replace(/,5,/, ',5e0,');
    expect(other).not.toBe(v2);
    expect(packedPartitionsJson(parseMessage(other).payload as TableState)).toContain(',5e0,');
    // Not for version 1, nor a state the schema had to change, nor a text laid out otherwise.
    expect(packedPartitionsJson(parseMessage(written(s, 1)).payload as TableState)).toBeUndefined();
    const envelope = JSON.parse(v2) as Record<string, unknown> & {
      payload: Record<string, unknown>;
    };
    const { payload: wire, ...head } = envelope;
    const variants = [
      { ...envelope, payload: { ...wire, extra: 1 } },
      { ...envelope, extra: 1 },
      // Parsed with the reviver (an unsafe integer): the text is not the value's.
      { ...head, unknown: 12345678901234567890n, payload: wire },
    ];
    for (const v of variants) {
      const text = stringifyJson(v);
      const parsed = parseMessage(text).payload as TableState;
      expect(parsed).toStrictEqual(s);
      expect(packedPartitionsJson(parsed), text.slice(0, 80)).toBeUndefined();
    }
    expect(
      packedPartitionsJson(parseMessage(JSON.stringify(envelope, null, 1)).payload as TableState),
    ).toBeUndefined();
  });

  it('keeps a view of the bytes of a message read as bytes, not a copy (what Redis is sent)', () => {
    // Non-ASCII before the list and in it: the member is found by bytes, not characters.
    const zurich = hundred.map((p, i) =>
      i === 0 ? { ...p, partition: { ...p.partition, region: 'zürich' } } : p,
    );
    const s = { ...state(zurich), properties: { comment: 'Café ☕' } };
    const text = written(s, 2);
    // A view at an offset into a larger buffer, as kafkajs hands a message's value.
    const bytes = new TextEncoder().encode(`prefix${text}`).subarray('prefix'.length);
    for (const expected of [undefined, [MessageType.TableScanned]]) {
      const payload = parseMessage(bytes, expected).payload as TableState;
      expect(payload).toStrictEqual(s);
      const kept = packedPartitionsJson(payload);
      expect(kept).toBeInstanceOf(Uint8Array);
      expect((kept as Uint8Array).buffer).toBe(bytes.buffer);
      // The member's value as the message carried it.
      const member = ',"packedPartitions":';
      expect(Buffer.from(kept as Uint8Array).toString('utf8')).toBe(
        text.slice(text.lastIndexOf(member) + member.length, -2),
      );
    }
    // Laid out otherwise (here a trailing space): nothing kept.
    const spaced = parseMessage(new TextEncoder().encode(`${text} `)).payload as TableState;
    expect(spaced).toStrictEqual(s);
    expect(packedPartitionsJson(spaced)).toBeUndefined();
  });
});
