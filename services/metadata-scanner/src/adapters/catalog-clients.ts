import { RestCatalog } from '@icepack/iceberg';
import { catalogAccessProblems, SecretResolutionError } from '@icepack/runtime';
import type { CatalogAccessPolicy, SecretResolver } from '@icepack/runtime';
import type { Catalog } from '@icepack/types';
import { catalogClientOptions } from '../domain/catalog-client-options.ts';

/**
 * One REST client per catalog, rebuilt when the catalog's definition changes (a new URI
 * or credentials must take effect without a restart).
 */
export class CatalogClients {
  readonly #clients = new Map<string, { definition: string; client: RestCatalog }>();
  readonly #resolveSecret: SecretResolver;
  readonly #timeoutMs: number;
  readonly #policy: CatalogAccessPolicy;
  readonly #maxResponseBytes: number;
  /** Catalogs whose `file:` locations may be read here (names, or `*`). */
  readonly #localCatalogs: readonly string[];

  constructor(
    resolveSecret: SecretResolver,
    timeoutMs: number,
    policy: CatalogAccessPolicy,
    maxResponseBytes: number,
    localCatalogs: readonly string[] = [],
  ) {
    this.#localCatalogs = localCatalogs;
    this.#resolveSecret = resolveSecret;
    this.#timeoutMs = timeoutMs;
    this.#policy = policy;
    this.#maxResponseBytes = maxResponseBytes;
  }

  get(catalog: Catalog): RestCatalog {
    const definition = JSON.stringify(catalog);
    const existing = this.#clients.get(catalog.name);
    if (existing?.definition === definition) return existing.client;
    // A definition from Kafka is checked like an API body: the topic's writers are not
    // trusted to point credentials at metadata endpoints or at the service's own secrets.
    const refused = catalogAccessProblems(catalog, this.#policy);
    if (refused.length > 0) {
      throw new SecretResolutionError(
        `catalog ${catalog.name} refused: ${refused.map((p) => `${p.path}: ${p.message}`).join('; ')}`,
      );
    }
    const client = new RestCatalog({
      ...catalogClientOptions(catalog, this.#resolveSecret, this.#timeoutMs, this.#localCatalogs),
      maxResponseBytes: this.#maxResponseBytes,
    });
    this.#clients.set(catalog.name, { definition, client });
    return client;
  }

  /** Drops clients of catalogs no longer active. */
  retain(names: ReadonlySet<string>): void {
    for (const name of this.#clients.keys()) if (!names.has(name)) this.#clients.delete(name);
  }
}
