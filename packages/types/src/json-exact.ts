/**
 * JSON with exact 64-bit integers. Iceberg snapshot ids and sequence numbers are 63/64-bit
 * integers; `JSON.parse` would round them to the nearest double. Node 24 passes the source
 * text of every primitive to the reviver, which lets us keep such integers exact.
 */

/** The third argument Node 24 (V8, "JSON.parse source text access") passes to a reviver. */
interface ReviverContext {
  readonly source?: string;
}

type ExactReviver = (
  this: unknown,
  key: string,
  value: unknown,
  context?: ReviverContext,
) => unknown;

const INTEGER_LITERAL = /^-?(?:0|[1-9][0-9]*)$/;

const keepUnsafeIntegers: ExactReviver = (_key, value, context) => {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    const source = context?.source;
    // Only integer literals: `1e20` or `1.5` are written as floats and stay numbers.
    // The source is a view into the whole parsed text (V8 slices it): a string of its own,
    // or every id kept (the scanner's stored states) keeps its whole catalog answer alive.
    if (source !== undefined && INTEGER_LITERAL.test(source)) return BigInt(source).toString();
  }
  return value;
};

/**
 * `JSON.parse`, except that an integer literal beyond `Number.MAX_SAFE_INTEGER` (either sign)
 * is returned as its exact decimal string. Safe integers and floats stay numbers.
 * Throws `SyntaxError` on malformed JSON, like `JSON.parse`.
 */
export function parseJsonExact(text: string): unknown {
  return parseJsonExactly(text).value;
}

/**
 * {@link parseJsonExact}, and whether it was a plain `JSON.parse` (no integer literal turned
 * into a string): then the value is the text's, member for member, and a part of the text
 * can stand for the part of the value it holds.
 */
export function parseJsonExactly(text: string): { value: unknown; plain: boolean } {
  // The reviver runs for every value: ~7× the cost of a plain parse (a table state listing 100
  // partitions: ~0.75 ms instead of ~0.11 ms, more than the planner's whole handling of it;
  // issue 17 point 6). It can change only an integer literal of 16 or more digits, and every
  // number token follows `:`, `,`, `[` or the start of the text (then maybe whitespace): without
  // such a run of digits there, the plain parse is the same. A match inside a string (rare:
  // snapshot ids are written `":"` then a quote) only costs the slow path.
  if (!MAYBE_UNSAFE_INTEGER.test(text)) return { value: JSON.parse(text) as unknown, plain: true };
  return {
    value: JSON.parse(text, keepUnsafeIntegers as Parameters<typeof JSON.parse>[1]) as unknown,
    plain: false,
  };
}

/** Where a number token of 16 or more digits may start (see {@link parseJsonExact}). */
const MAYBE_UNSAFE_INTEGER = /(?:^|[:,[])[ \t\n\r]*-?[0-9]{16}/;

/** `JSON.rawJSON` (Node 21+) is not in the es2024 lib typings yet. */
const rawJson = (JSON as unknown as { rawJSON: (text: string) => unknown }).rawJSON;

/**
 * `JSON.stringify` that never loses an integer: a `bigint` is written as its exact digits
 * (a JSON number), where `JSON.stringify` would throw. Strings, including the exact id
 * strings `parseJsonExact` returns, are written as strings.
 */
export function stringifyJson(value: unknown, space?: number): string {
  let text: string | undefined;
  try {
    // Without a replacer V8 takes its fast path (a task event in ~1 µs instead of ~2.2 µs);
    // only a bigint, which it cannot write, sends the value through the replacer.
    text = JSON.stringify(value, undefined, space);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    text = JSON.stringify(value, exactIntegers, space);
  }
  if (text === undefined) throw new TypeError(`value is not serialisable as JSON: ${typeof value}`);
  return text;
}

const exactIntegers = (_key: string, v: unknown): unknown =>
  typeof v === 'bigint' ? rawJson(v.toString()) : v;
