/** The REST spec's default multipart namespace separator (unit separator, `%1F` encoded). */
export const NAMESPACE_SEPARATOR = '\u001f';

/**
 * `['a', 'b']` → `a%1Fb`: each part percent-encoded, joined by the percent-encoded
 * separator, so a part may hold any character but the separator itself.
 */
export function encodeNamespace(
  parts: readonly string[],
  separator: string = NAMESPACE_SEPARATOR,
): string {
  return parts.map(encodeURIComponent).join(encodeURIComponent(separator));
}

/** The `parent` query value (URLSearchParams percent-encodes it, separator included). */
export function namespaceParam(
  parts: readonly string[],
  separator: string = NAMESPACE_SEPARATOR,
): string {
  return parts.join(separator);
}

/**
 * The separator a catalog asks for with the `namespace-separator` config property, which
 * Iceberg's REST clients read URL-encoded (`%1F`, `%2E`). Absent or empty → the default; a
 * value that is not valid percent-encoding is taken as it is.
 */
export function separatorFromConfig(value: string | undefined): string {
  if (value === undefined || value === '') return NAMESPACE_SEPARATOR;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * The config's `prefix` as path segments. Iceberg's own client puts the prefix in the path as
 * the server sent it, so servers send it ready for the path: Nessie's `main|warehouse` comes as
 * `main%7Cwarehouse`, and encoding that again would name the branch `main%7Cwarehouse`. Each
 * segment is decoded once and encoded again, so escapes the server sent stay as they are and
 * characters it left raw (space, `?`, `#`) cannot break out of the path. A segment that is not
 * valid percent-encoding is encoded as it is.
 */
export function prefixPath(prefix: string): string {
  return prefix
    .split('/')
    .map((segment) => {
      try {
        return encodeURIComponent(decodeURIComponent(segment));
      } catch {
        return encodeURIComponent(segment);
      }
    })
    .join('/');
}
