import type { z } from 'zod';

/** One problem with one field: `path` is dotted, e.g. `payload.table.namespace[0]`. */
export interface ValidationIssue {
  readonly path: string;
  readonly message: string;
  readonly code: string;
}

/** Thrown by every `parse…` function in this package; the message names each bad field. */
export class ValidationError extends Error {
  override readonly name = 'ValidationError';
  readonly issues: readonly ValidationIssue[];
  /** What was being parsed, e.g. `envelope` or `table metadata`. */
  readonly subject: string;

  constructor(subject: string, issues: readonly ValidationIssue[], options?: ErrorOptions) {
    super(`invalid ${subject}: ${issues.map(formatIssue).join('; ')}`, options);
    this.subject = subject;
    this.issues = issues;
  }
}

function formatIssue(issue: ValidationIssue): string {
  return issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`;
}

const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/**
 * `['payload', 'table', 'namespace', 0]` → `payload.table.namespace[0]`; keys that are not
 * plain identifiers (kebab-case is plain) are quoted: `properties["write.format.default"]`.
 */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'symbol') out += `[${String(segment)}]`;
    else if (PLAIN_KEY.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** Flattens a zod error into issues with dotted paths, optionally under a prefix path. */
export function zodIssues(
  error: z.ZodError,
  prefix: readonly PropertyKey[] = [],
): ValidationIssue[] {
  return error.issues.map((issue) => ({
    path: formatPath([...prefix, ...issue.path]),
    message: issue.message,
    code: issue.code,
  }));
}

/** `path: message; path: message` — for logs and HTTP 400 bodies. */
export function formatZodError(error: z.ZodError, prefix: readonly PropertyKey[] = []): string {
  return zodIssues(error, prefix).map(formatIssue).join('; ');
}

/** Parses `value` with `schema` or throws a `ValidationError` about `subject`. */
export function parseWith<S extends z.ZodType>(
  schema: S,
  value: unknown,
  subject: string,
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new ValidationError(subject, zodIssues(result.error), { cause: result.error });
}
