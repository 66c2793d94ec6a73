import { describe, expect, it } from 'vitest';
import { parseJsonExact, stringifyJson } from './json-exact.ts';

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
});
