import { RestCatalog, restCatalogOptions } from '@icepack/iceberg';
import {
  catalogAccessProblems,
  isLocalCatalog,
  propertyValueProblem,
  SecretResolutionError,
} from '@icepack/runtime';
import type { CatalogAccessPolicy, SecretResolver } from '@icepack/runtime';
import type { Catalog } from '@icepack/types';

/**
 * One REST client per catalog, rebuilt when the catalog's definition changes (a new URI
 * or credentials must take effect without a restart). Each client keeps its OAuth2 token and
 * its S3 clients across scans (ADR 0019); a replaced or dropped client is closed.
 */
export class CatalogClients {
  readonly #clients = new Map<string, { definition: string; client: RestCatalog }>();
  readonly #resolveSecret: SecretResolver;
  readonly #timeoutMs: number;
  readonly #policy: CatalogAccessPolicy;
  readonly #maxResponseBytes: number;
  /** Catalogs whose `file:` locations may be read here (names, or `*`). */
  readonly #localCatalogs: readonly string[];
  /** Accept gzip-compressed answers (ICEPACK_SCANNER_CATALOG_GZIP). */
  readonly #compressedResponses: boolean;

  constructor(
    resolveSecret: SecretResolver,
    timeoutMs: number,
    policy: CatalogAccessPolicy,
    maxResponseBytes: number,
    localCatalogs: readonly string[] = [],
    compressedResponses = true,
  ) {
    this.#localCatalogs = localCatalogs;
    this.#compressedResponses = compressedResponses;
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
    const client = new RestCatalog(
      restCatalogOptions(catalog, this.#resolveSecret, {
        timeoutMs: this.#timeoutMs,
        localFiles: isLocalCatalog(catalog.name, this.#localCatalogs),
        maxResponseBytes: this.#maxResponseBytes,
        compressedResponses: this.#compressedResponses,
        // The answers' storage endpoints pass the rule the definition's properties passed.
        answerPropertyProblem: (value) => propertyValueProblem(value, this.#policy),
      }),
    );
    // The old client's S3 connections close once its reads under way have ended.
    existing?.client.close();
    this.#clients.set(catalog.name, { definition, client });
    return client;
  }

  /** Drops (and closes) clients of catalogs no longer active. */
  retain(names: ReadonlySet<string>): void {
    for (const [name, { client }] of this.#clients) {
      if (names.has(name)) continue;
      client.close();
      this.#clients.delete(name);
    }
  }
}
