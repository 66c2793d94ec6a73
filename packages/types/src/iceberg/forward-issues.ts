import { z } from 'zod';

/**
 * Parses `value` with `schema` inside a transform and re-reports its issues at their own
 * paths. Used where a plain union would hide the useful error behind "Invalid input".
 */
export function parseNested<S extends z.ZodType>(
  schema: S,
  value: unknown,
  ctx: z.RefinementCtx,
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues) {
    ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
  }
  return z.NEVER;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
