/** The REST spec's multipart namespace separator (unit separator, `%1F` when encoded). */
export const NAMESPACE_SEPARATOR = '\u001f';

/** `['a', 'b']` → `a%1Fb`, each part percent-encoded: safe inside a URL path or query. */
export function encodeNamespace(parts: readonly string[]): string {
  return encodeURIComponent(parts.join(NAMESPACE_SEPARATOR));
}

/** The `parent` query value (URLSearchParams encodes the separator as `%1F`). */
export function namespaceParam(parts: readonly string[]): string {
  return parts.join(NAMESPACE_SEPARATOR);
}
