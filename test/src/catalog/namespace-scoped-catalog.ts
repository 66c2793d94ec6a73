import { answerChanged, startCatalogProxy } from './catalog-proxy.ts';

export interface NamespaceScopedCatalog {
  /** The catalog's URI: the shared REST catalog, seen through one top-level namespace. */
  readonly uri: string;
  close(): Promise<void>;
}

/**
 * A test's own catalog over the shared REST catalog (docs/testing.md): every request is
 * forwarded unchanged, except that namespace listings show only `namespace` and its children.
 * A service that walks this catalog then sees the test's tables alone — not the tables other
 * test files left in the shared catalog — without starting a second catalog server.
 */
export function startNamespaceScopedCatalog(options: {
  /** The shared REST catalog's URI. */
  readonly target: string;
  /** The one top-level namespace it shows. */
  readonly namespace: string;
}): Promise<NamespaceScopedCatalog> {
  return startCatalogProxy(options.target, (req, res, forward) => {
    const path = new URL(req.url ?? '/', 'http://scoped').pathname;
    if (req.method !== 'GET' || !/^\/v1\/(?:[^/]+\/)?namespaces$/.test(path)) {
      forward();
      return;
    }
    // A listing is rewritten here, so it is asked for uncompressed.
    forward({
      headers: { 'accept-encoding': 'identity' },
      answer: (answer) =>
        answerChanged(answer, res, (text) => {
          const body = JSON.parse(text) as { namespaces: string[][] };
          return JSON.stringify({
            ...body,
            namespaces: body.namespaces.filter((ns) => ns[0] === options.namespace),
          });
        }),
    });
  });
}
