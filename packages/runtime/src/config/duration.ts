import { z } from 'zod';

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/;

export class DurationParseError extends Error {
  override name = 'DurationParseError';
}

/**
 * Parses `100ms`, `30s`, `5m`, `1h`, `2d` (or a bare number of milliseconds) into
 * milliseconds. The one place durations become numbers, so every option agrees on units.
 */
export function parseDuration(text: string): number {
  const match = DURATION.exec(text.trim());
  if (match === null) {
    throw new DurationParseError(
      `expected a duration such as 100ms, 30s, 5m, 1h or 2d, got "${text}"`,
    );
  }
  const unit = (match[2] ?? 'ms') as keyof typeof UNIT_MS;
  return Math.round(Number(match[1]) * UNIT_MS[unit]);
}

/** A zod schema for a duration variable: a string in, milliseconds out. */
export function duration(): z.ZodPipe<z.ZodString, z.ZodTransform<number, string>> {
  return z.string().transform((text, ctx) => {
    try {
      return parseDuration(text);
    } catch (error) {
      ctx.issues.push({ code: 'custom', message: (error as Error).message, input: text });
      return z.NEVER;
    }
  });
}
