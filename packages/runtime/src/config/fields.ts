import { z } from 'zod';

const TRUE = new Set(['1', 'true', 'on', 'yes']);
const FALSE = new Set(['0', 'false', 'off', 'no']);

/** `on`/`off`, `true`/`false`, `yes`/`no`, `1`/`0` (any case) → boolean. */
export function flag(): z.ZodPipe<z.ZodString, z.ZodTransform<boolean, string>> {
  return z.string().transform((text, ctx) => {
    const value = text.trim().toLowerCase();
    if (TRUE.has(value)) return true;
    if (FALSE.has(value)) return false;
    ctx.issues.push({ code: 'custom', message: `expected on or off, got "${text}"`, input: text });
    return z.NEVER;
  });
}

/** A TCP port; 0 asks the OS for a free one. */
export function port(): z.ZodCoercedNumber<unknown> {
  return z.coerce
    .number({ error: 'expected a port number' })
    .int('expected a port number')
    .min(0, 'expected a port number from 0 to 65535')
    .max(65535, 'expected a port number from 0 to 65535');
}

const HOST_PORT = /^[A-Za-z0-9.-]+:\d{1,5}$|^\[[0-9A-Fa-f:]+\]:\d{1,5}$/;

/** A comma-separated list of `host:port` (Kafka brokers). */
export function hostPortList(): z.ZodPipe<z.ZodString, z.ZodTransform<string[], string>> {
  return z.string().transform((text, ctx) => {
    const items = text
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
    if (items.length === 0) {
      ctx.issues.push({ code: 'custom', message: 'expected host:port[,host:port…]', input: text });
      return z.NEVER;
    }
    for (const item of items) {
      if (!HOST_PORT.test(item)) {
        ctx.issues.push({
          code: 'custom',
          message: `expected host:port[,host:port…], got "${item}"`,
          input: text,
        });
        return z.NEVER;
      }
    }
    return items;
  });
}

/** A URL whose scheme is one of `protocols` (without the colon). */
export function url(protocols: readonly string[]): z.ZodString {
  return z.string().refine(
    (text) => {
      try {
        return protocols.includes(new URL(text).protocol.replace(/:$/, ''));
      } catch {
        return false;
      }
    },
    { error: `expected a URL starting with ${protocols.map((p) => `${p}://`).join(' or ')}` },
  );
}

/** A comma-separated list (items trimmed, empty ones dropped); `defaults` when unset. */
export function commaList(defaults: readonly string[] = []) {
  return z
    .string()
    .transform((text) =>
      text
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== ''),
    )
    .default([...defaults]);
}
