import { z } from 'zod';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const DECIMAL_INTEGER = /^-?(?:0|[1-9][0-9]*)$/;

/** A decimal integer literal within the signed 64-bit range (what `int64String` accepts). */
export function isInt64Text(text: string): boolean {
  if (!DECIMAL_INTEGER.test(text)) return false;
  // 18 characters hold at most 18 digits: below 2^63 (no BigInt for the usual sequence number).
  if (text.length <= 18) return true;
  const value = BigInt(text);
  return value >= INT64_MIN && value <= INT64_MAX;
}

/**
 * A 64-bit integer (snapshot id, sequence number) as its exact decimal string. Strict: a
 * JS number here means precision may already have been lost upstream, so it is rejected.
 */
export const int64String = z
  .string({ error: 'expected a 64-bit integer as a decimal string' })
  .refine(isInt64Text, { error: 'expected a 64-bit integer as a decimal string' });

/**
 * A 64-bit integer from a foreign writer (Iceberg metadata, external commit events): the
 * exact string `parseJsonExact` produces for big values, or a safe-integer number, which is
 * normalised to its decimal string.
 */
export const int64 = z
  .union([z.string(), z.number()], { error: 'expected a 64-bit integer' })
  .transform((value, ctx) => {
    if (typeof value === 'number') {
      if (Number.isSafeInteger(value)) return String(value);
      ctx.addIssue({
        code: 'custom',
        message: `expected a 64-bit integer, got the number ${value}, which is not a safe integer`,
      });
      return z.NEVER;
    }
    if (isInt64Text(value)) return value;
    ctx.addIssue({
      code: 'custom',
      message: `expected a 64-bit integer, got ${JSON.stringify(value)}`,
    });
    return z.NEVER;
  });

/** A count or byte size: a non-negative safe integer. */
export const count = z.int().min(0);

/** An instant as an ISO-8601 date-time with `Z` or an offset. */
export const isoDateTime = z.iso.datetime({ offset: true });

/** Milliseconds since the epoch (safe integer). */
export const epochMillis = z.int();

/** W3C trace context `traceparent` header value. */
export const traceparent = z.string().regex(/^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/, {
  error: 'expected a W3C traceparent',
});

/** string → string map (table properties, snapshot summaries, headers). */
export const stringMap = z.record(z.string(), z.string());

/** DNS-1123 label: lower-case alphanumerics and `-`, starting and ending alphanumeric. */
export function dnsLabel(maxLength = 63) {
  return z
    .string()
    .max(maxLength, { error: `must be at most ${maxLength} characters` })
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, {
      error:
        'must be a DNS-1123 label: lower-case letters, digits and "-", starting and ending with a letter or digit',
    });
}
