import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { parseJsonExact, stringifyJson } from './json-exact.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('parseJsonExact', () => {
  it.each([
    ['6716213459318430795', '6716213459318430795'],
    ['-6716213459318430795', '-6716213459318430795'],
    ['9223372036854775807', '9223372036854775807'],
    ['-9223372036854775808', '-9223372036854775808'],
    ['9007199254740992', '9007199254740992'], // MAX_SAFE_INTEGER + 1
  ])('keeps the unsafe integer %s exact as a string', (literal, expected) => {
    expect(parseJsonExact(`{"snapshot-id": ${literal}}`)).toEqual({ 'snapshot-id': expected });
  });

  it.each([
    ['9007199254740991', 9007199254740991],
    ['-9007199254740991', -9007199254740991],
    ['0', 0],
    ['-1', -1],
    ['1.5', 1.5],
    ['1e20', 1e20],
    ['1.5e300', 1.5e300],
  ])('keeps %s a number', (literal, expected) => {
    expect(parseJsonExact(`[${literal}]`)).toEqual([expected]);
  });

  it('an exact integer kept from a parse does not keep the whole parsed text alive', () => {
    // The scanner keeps a table's snapshot ids in its state store for as long as it runs; a
    // string that was a view of the catalog answer would hold each answer (kilobytes) too.
    const pad = 2 ** 20;
    const ids: unknown[] = [];
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 40; i++) {
      // A text of its own each time (1 MiB), with one unsafe integer in it.
      const text = `{"snapshot-id":${String(9007199254740993n + BigInt(i))},"pad":"${'x'.repeat(pad + i)}"}`;
      ids.push((parseJsonExact(text) as { 'snapshot-id': unknown })['snapshot-id']);
    }
    gc();
    const kept = process.memoryUsage().heapUsed - before;
    expect(ids[39]).toBe('9007199254741032');
    // 40 texts of 1 MiB are garbage now; only 40 short strings stay.
    expect(kept).toBeLessThan(10 * pad);
  });

  it('works at any depth and in arrays', () => {
    const parsed = parseJsonExact(
      '{"snapshots":[{"snapshot-id":3051729675574597004,"timestamp-ms":1515100955770,"summary":{"operation":"append"}}]}',
    );
    expect(parsed).toEqual({
      snapshots: [
        {
          'snapshot-id': '3051729675574597004',
          'timestamp-ms': 1515100955770,
          summary: { operation: 'append' },
        },
      ],
    });
  });

  it('keeps an unsafe integer exact wherever JSON allows a number, whitespace around it', () => {
    expect(parseJsonExact(' 9007199254740993 ')).toBe('9007199254740993');
    expect(parseJsonExact('{"a":\n\t 9007199254740993,"b":[1,\r\n-9007199254740993]}')).toEqual({
      a: '9007199254740993',
      b: [1, '-9007199254740993'],
    });
    expect(parseJsonExact('[[9007199254740993]]')).toEqual([['9007199254740993']]);
  });

  it('parses a text whose long digit runs are all in strings as JSON.parse does', () => {
    // A table state: snapshot ids as strings, byte counts, times (the plain parse's fast path).
    const text =
      '{"currentSnapshotId":"6716213459318430795","bytes":2147483648,"at":"2026-01-10T00:03:00.000Z",' +
      '"f":1.2345678901234567,"x":"a:12345678901234567,[9223372036854775807"}';
    expect(parseJsonExact(text)).toEqual(JSON.parse(text));
  });

  it('throws SyntaxError on malformed JSON', () => {
    expect(() => parseJsonExact('{"a":')).toThrow(SyntaxError);
  });
});

describe('stringifyJson', () => {
  it('writes bigint as exact digits', () => {
    expect(stringifyJson({ id: 6716213459318430795n, n: -9223372036854775808n })).toBe(
      '{"id":6716213459318430795,"n":-9223372036854775808}',
    );
  });

  it('round-trips through parseJsonExact without losing digits', () => {
    const text = '{"a":6716213459318430795,"b":[-9223372036854775808,1,2.5],"c":"x"}';
    const parsed = parseJsonExact(text) as { a: string };
    expect(parsed.a).toBe('6716213459318430795');
    expect(stringifyJson({ ...(parsed as object), a: BigInt(parsed.a) })).toBe(
      '{"a":6716213459318430795,"b":["-9223372036854775808",1,2.5],"c":"x"}',
    );
  });

  it('throws on a value JSON cannot represent', () => {
    expect(() => stringifyJson(undefined)).toThrow(TypeError);
  });

  it('writes a value without bigints as JSON.stringify does, and a bigint deep inside exactly', () => {
    const value = { a: [1, 'x', null, { b: 2.5 }], c: new Date(0), d: undefined };
    expect(stringifyJson(value)).toBe(JSON.stringify(value));
    expect(stringifyJson(value, 2)).toBe(JSON.stringify(value, null, 2));
    expect(stringifyJson({ ...value, e: [{ f: 9007199254740993n }] }, 2)).toContain(
      '"f": 9007199254740993',
    );
    const circular: Record<string, unknown> = {};
    circular['self'] = circular;
    expect(() => stringifyJson(circular)).toThrow(TypeError);
  });
});
