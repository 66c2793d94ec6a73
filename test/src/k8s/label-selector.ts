import { badRequest } from './api-status.ts';

type Requirement =
  | { readonly op: 'eq'; readonly key: string; readonly value: string }
  | { readonly op: 'ne'; readonly key: string; readonly value: string }
  | { readonly op: 'in'; readonly key: string; readonly values: readonly string[] }
  | { readonly op: 'notin'; readonly key: string; readonly values: readonly string[] }
  | { readonly op: 'exists'; readonly key: string }
  | { readonly op: 'notexists'; readonly key: string };

/** A parsed label or field selector: all requirements must hold. */
export type Selector = (labels: Readonly<Record<string, string>>) => boolean;

/** Splits on commas that are not inside `in (…)` parentheses. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of text) {
    if (char === '(') depth += 1;
    if (char === ')') depth -= 1;
    if (char === ',' && depth === 0) {
      terms.push(current);
      current = '';
    } else current += char;
  }
  terms.push(current);
  return terms.map((term) => term.trim()).filter((term) => term !== '');
}

function parseTerm(term: string): Requirement {
  let match = /^([^\s!=]+)\s*(==|=|!=)\s*([^\s]*)$/.exec(term);
  if (match !== null) {
    const [, key = '', op, value = ''] = match;
    return op === '!=' ? { op: 'ne', key, value } : { op: 'eq', key, value };
  }
  match = /^([^\s!=]+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(term);
  if (match !== null) {
    const [, key = '', op, list = ''] = match;
    const values = list.split(',').map((v) => v.trim());
    return op === 'in' ? { op: 'in', key, values } : { op: 'notin', key, values };
  }
  match = /^(!?)([^\s!=()]+)$/.exec(term);
  if (match !== null) {
    const [, not, key = ''] = match;
    return not === '!' ? { op: 'notexists', key } : { op: 'exists', key };
  }
  throw badRequest(`unable to parse requirement: ${JSON.stringify(term)}`);
}

function holds(req: Requirement, labels: Readonly<Record<string, string>>): boolean {
  const value = labels[req.key];
  switch (req.op) {
    case 'eq':
      return value === req.value;
    case 'ne':
      return value !== req.value;
    case 'in':
      return value !== undefined && req.values.includes(value);
    case 'notin':
      return value === undefined || !req.values.includes(value);
    case 'exists':
      return value !== undefined;
    case 'notexists':
      return value === undefined;
  }
}

/** Parses a `labelSelector` (equality, set-based and existence terms); absent → matches all. */
export function parseSelector(text: string | null | undefined): Selector {
  if (text === null || text === undefined || text.trim() === '') return () => true;
  const requirements = splitTerms(text).map(parseTerm);
  return (labels) => requirements.every((req) => holds(req, labels));
}

/** Field selectors: only `metadata.name` and `metadata.namespace`, as clients use them. */
export function parseFieldSelector(text: string | null | undefined): Selector {
  if (text === null || text === undefined || text.trim() === '') return () => true;
  for (const term of splitTerms(text)) {
    const key = /^([^!=]+)/.exec(term)?.[1]?.trim();
    if (key !== 'metadata.name' && key !== 'metadata.namespace') {
      throw badRequest(
        `"${key ?? term}" is not a known field selector: only "metadata.name", "metadata.namespace"`,
      );
    }
  }
  return parseSelector(text);
}
