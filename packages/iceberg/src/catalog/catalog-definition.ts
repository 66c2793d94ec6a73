import type { Catalog, SecretRef } from '@icepack/types';
import type { RestCatalogAuth } from './catalog-auth.ts';
import type { RestCatalogOptions } from './rest-catalog-options.ts';

/** Turns a secret reference into its value; throws naming the field when it cannot. */
export type ResolveSecret = (ref: SecretRef, field: string) => string;

export interface CatalogClientSettings {
  /** Per catalog request. */
  readonly timeoutMs: number;
  /** Whether `file:` locations are read for this catalog (configured as local). */
  readonly localFiles: boolean;
  readonly maxResponseBytes?: number;
  /** `RestCatalogOptions.compressedResponses`; default true. */
  readonly compressedResponses?: boolean;
  /**
   * `RestCatalogOptions.answerPropertyProblem`: the check of the values the catalog's answers
   * carry (`s3.endpoint` …), the same the definition's properties passed. Required: a service's
   * storage reads must not go where a registered property could not.
   */
  readonly answerPropertyProblem: (value: string) => string | undefined;
}

/**
 * REST client options for a catalog definition: URI, warehouse, properties and auth, the
 * same for every reader (the scanner, the dispatcher's figures). Secrets are resolved here,
 * at the last moment, and live only inside the client.
 */
export function restCatalogOptions(
  catalog: Catalog,
  resolveSecret: ResolveSecret,
  settings: CatalogClientSettings,
): RestCatalogOptions {
  return {
    name: catalog.name,
    uri: catalog.uri,
    ...(catalog.warehouse === undefined ? {} : { warehouse: catalog.warehouse }),
    properties: catalog.properties,
    auth: clientAuth(catalog.auth, resolveSecret),
    timeoutMs: settings.timeoutMs,
    localFiles: settings.localFiles,
    answerPropertyProblem: settings.answerPropertyProblem,
    ...(settings.maxResponseBytes === undefined
      ? {}
      : { maxResponseBytes: settings.maxResponseBytes }),
    ...(settings.compressedResponses === undefined
      ? {}
      : { compressedResponses: settings.compressedResponses }),
  };
}

function clientAuth(auth: Catalog['auth'], resolveSecret: ResolveSecret): RestCatalogAuth {
  switch (auth.type) {
    case 'none':
      return { type: 'none' };
    case 'bearer':
      return { type: 'bearer', token: resolveSecret(auth.token, 'auth.token') };
    case 'oauth2': {
      const secret = resolveSecret(auth.clientSecret, 'auth.clientSecret');
      return {
        type: 'oauth2',
        credential: auth.clientId === undefined ? secret : `${auth.clientId}:${secret}`,
        ...(auth.serverUri === undefined ? {} : { serverUri: auth.serverUri }),
        ...(auth.scope === undefined ? {} : { scope: auth.scope }),
      };
    }
  }
}
