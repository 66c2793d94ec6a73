import { RestCatalog } from '@icepack/iceberg';
import type { Catalog } from '@icepack/types';
import { catalogClientOptions, type SecretResolver } from '../domain/catalog-client-options.ts';

/**
 * One REST client per catalog, rebuilt when the catalog's definition changes (a new URI
 * or credentials must take effect without a restart).
 */
export class CatalogClients {
  readonly #clients = new Map<string, { definition: string; client: RestCatalog }>();
  readonly #resolveSecret: SecretResolver;
  readonly #timeoutMs: number;

  constructor(resolveSecret: SecretResolver, timeoutMs: number) {
    this.#resolveSecret = resolveSecret;
    this.#timeoutMs = timeoutMs;
  }

  get(catalog: Catalog): RestCatalog {
    const definition = JSON.stringify(catalog);
    const existing = this.#clients.get(catalog.name);
    if (existing?.definition === definition) return existing.client;
    const client = new RestCatalog(
      catalogClientOptions(catalog, this.#resolveSecret, this.#timeoutMs),
    );
    this.#clients.set(catalog.name, { definition, client });
    return client;
  }

  /** Drops clients of catalogs no longer active. */
  retain(names: ReadonlySet<string>): void {
    for (const name of this.#clients.keys()) if (!names.has(name)) this.#clients.delete(name);
  }
}
