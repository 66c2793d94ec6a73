import { z } from 'zod';

/** Schemas of variables that hold secrets: redacted in logs, readable from `NAME_FILE`. */
const secrets = z.registry<{ secret: true }>();

/** Marks a config variable as secret. Wrap the innermost schema or the whole field. */
export function secret<T extends z.ZodType>(schema: T): T {
  secrets.add(schema, { secret: true });
  return schema;
}

/** True when the field schema, or a schema it wraps (optional, default…), is secret. */
export function isSecret(schema: z.ZodType): boolean {
  let current: unknown = schema;
  for (let depth = 0; depth < 8 && current !== undefined; depth++) {
    if (secrets.has(current as z.ZodType)) return true;
    const def = (current as { _zod?: { def?: { innerType?: unknown; in?: unknown } } })._zod?.def;
    current = def?.innerType ?? def?.in;
  }
  return false;
}
