import { answerChanged, startCatalogProxy, type CatalogProxy } from './catalog-proxy.ts';

/** Properties a catalog operator adds to the answers the clients build storage clients from. */
export interface AnswerProperties {
  /** The shared REST catalog's URI. */
  readonly target: string;
  /** Added to the `overrides` of `GET /v1/config`. Default: none. */
  readonly config?: Readonly<Record<string, string>>;
  /** The `config` of every table load answer. Default: none. */
  readonly table?: Readonly<Record<string, string>>;
}

const CONFIG = /^\/v1\/config$/;
const LOAD_TABLE = /^\/v1\/(?:[^/]+\/)?namespaces\/[^/]+\/tables\/[^/]+$/;

/**
 * The shared REST catalog with answers a hostile (or misconfigured) catalog operator would
 * give (docs/security.md): every request is forwarded, and the answers of `GET /v1/config` and
 * of table loads come back with the given properties — an `s3.endpoint` on a metadata address,
 * say. Apache's REST catalog server cannot be made to answer so: its config answer is empty and
 * its load answers carry no `config`.
 */
export function startAnswerPropertiesCatalog(options: AnswerProperties): Promise<CatalogProxy> {
  return startCatalogProxy(options.target, (req, res, forward) => {
    const path = new URL(req.url ?? '/', 'http://answers').pathname;
    const added = CONFIG.test(path)
      ? options.config
      : LOAD_TABLE.test(path)
        ? options.table
        : undefined;
    if (req.method !== 'GET' || added === undefined) {
      forward();
      return;
    }
    // The answer is rewritten here, so it is asked for uncompressed.
    forward({
      headers: { 'accept-encoding': 'identity' },
      answer: (answer) => answerChanged(answer, res, (text) => withProperties(text, path, added)),
    });
  });
}

/** The answer with `added`: merged into the config's overrides, or the table load's `config`. */
function withProperties(
  text: string,
  path: string,
  added: Readonly<Record<string, string>>,
): string {
  const body = JSON.parse(text) as Record<string, unknown>;
  if (CONFIG.test(path)) {
    const overrides = (body.overrides ?? {}) as Record<string, string>;
    return JSON.stringify({ ...body, overrides: { ...overrides, ...added } });
  }
  // Put in as text: the metadata's 64-bit snapshot ids would not survive a JSON round trip.
  if (body.config !== undefined) throw new Error('the catalog answered with a config of its own');
  return text.replace(/^\s*\{/, `{"config":${JSON.stringify(added)},`);
}
