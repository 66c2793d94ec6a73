import { parseCpuMillicores } from '@icepack/types';

/** JSON with sorted keys and no undefined members: equal values give equal text. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, canonical(v)]),
    );
  }
  return value;
}

/** Deep equality of API objects, whatever the key order or undefined fields of the client's models. */
export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a ?? null)) === JSON.stringify(canonical(b ?? null));
}

/** Quantity maps compared by value: the API server may write "1Gi" back as "1024Mi". */
export function sameQuantities(
  a: Readonly<Record<string, string>>,
  b: Readonly<Record<string, string>>,
): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    const x = a[key];
    const y = b[key];
    if (x === undefined || y === undefined) return false;
    try {
      if (parseCpuMillicores(x) !== parseCpuMillicores(y)) return false;
    } catch {
      if (x !== y) return false;
    }
  }
  return true;
}

/**
 * Whether `current` (as the API server stores it) holds everything `desired` says: the
 * server adds defaults (a LimitRange's `default` from its `max`, a subject's `apiGroup`), and
 * those are not drift. Objects: every desired member matches; arrays: same length, element by
 * element; anything else: equal.
 */
export function holdsJson(current: unknown, desired: unknown): boolean {
  if (desired === undefined) return true;
  if (Array.isArray(desired)) {
    return (
      Array.isArray(current) &&
      current.length === desired.length &&
      desired.every((item, i) => holdsJson(current[i], item))
    );
  }
  if (typeof desired === 'object' && desired !== null) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return false;
    return Object.entries(desired).every(([key, value]) =>
      holdsJson((current as Record<string, unknown>)[key], value),
    );
  }
  return current === desired;
}
