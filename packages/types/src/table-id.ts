import { z } from 'zod';

/** A table in a catalog: the structured id used everywhere (never a dotted string). */
export const tableIdSchema = z.object({
  catalog: z.string().min(1),
  namespace: z.array(z.string().min(1)).min(1),
  name: z.string().min(1),
});
export type TableId = z.infer<typeof tableIdSchema>;

/** Thrown by `parseTableKey` for a string that `tableKey` could not have produced. */
export class InvalidTableKeyError extends Error {
  override readonly name = 'InvalidTableKeyError';
  readonly key: string;
  constructor(key: string, reason: string) {
    super(`invalid table key ${JSON.stringify(key)}: ${reason}`);
    this.key = key;
  }
}

// `%` (the escape), `.` (namespace separator), `/` (part separator), `:` (BullMQ's key
// separator), control characters and line separators (they would break log lines).
// Everything else stays readable, unicode included.
// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /[%./:\u0000-\u001f\u007f-\u009f\u2028\u2029]/gu;
// eslint-disable-next-line no-control-regex
const HAS_ESCAPE = /[%./:\u0000-\u001f\u007f-\u009f\u2028\u2029]/u;

function encodePart(part: string): string {
  // Nearly every part needs no escape: a test, not a replace with a callback (the planner
  // makes ~20 table keys and job ids per table state; issue 17 point 6).
  if (!HAS_ESCAPE.test(part)) return part;
  return part.replace(NEEDS_ESCAPE, (ch) => encodeURIComponent(ch).replace(/\./g, '%2E'));
}

function decodePart(key: string, part: string): string {
  if (part === '') throw new InvalidTableKeyError(key, 'empty part');
  try {
    return decodeURIComponent(part);
  } catch {
    throw new InvalidTableKeyError(key, `bad percent-encoding in ${JSON.stringify(part)}`);
  }
}

/**
 * `catalog/ns1.ns2/table`, each part percent-encoded for `% . / :` and control characters.
 * Unambiguous and human-readable; used as the Kafka key and inside BullMQ job ids (it never
 * contains `:` and is never all digits).
 */
export function tableKey(id: TableId): string {
  return `${encodePart(id.catalog)}/${id.namespace.map(encodePart).join('.')}/${encodePart(id.name)}`;
}

/** The inverse of `tableKey`; rejects anything `tableKey` would not produce (non-canonical too). */
export function parseTableKey(key: string): TableId {
  const parts = key.split('/');
  if (parts.length !== 3) throw new InvalidTableKeyError(key, 'expected catalog/namespace/table');
  const [catalog, namespace, name] = parts as [string, string, string];
  const id: TableId = {
    catalog: decodePart(key, catalog),
    namespace: namespace.split('.').map((p) => decodePart(key, p)),
    name: decodePart(key, name),
  };
  // Two spellings of one table would be two Kafka keys and two job ids: allow one.
  if (tableKey(id) !== key)
    throw new InvalidTableKeyError(key, `not canonical (expected ${tableKey(id)})`);
  return id;
}

const SIMPLE_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

function quoteIdentifier(part: string): string {
  return SIMPLE_IDENTIFIER.test(part) ? part : `\`${part.replaceAll('`', '``')}\``;
}

/** `catalog.ns1.ns2.table` for logs; parts that are not plain identifiers are back-quoted. */
export function formatTableName(id: TableId): string {
  return [id.catalog, ...id.namespace, id.name].map(quoteIdentifier).join('.');
}

/** Same table? (Structural equality of ids.) */
export function sameTable(a: TableId, b: TableId): boolean {
  return tableKey(a) === tableKey(b);
}
