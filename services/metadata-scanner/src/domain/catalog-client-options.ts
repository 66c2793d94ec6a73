import type { RestCatalogOptions } from '@icepack/iceberg';
import { isLocalCatalog } from '@icepack/runtime';
import type { SecretResolver } from '@icepack/runtime';
import type { Catalog } from '@icepack/types';

/**
 * REST client options for a catalog definition. Secrets are resolved here, at the last
 * moment, and live only inside the client.
 */
export function catalogClientOptions(
  catalog: Catalog,
  resolveSecret: SecretResolver,
  timeoutMs: number,
  localCatalogs: readonly string[] = [],
): RestCatalogOptions {
  const auth = catalog.auth;
  let clientAuth: RestCatalogOptions['auth'];
  switch (auth.type) {
    case 'none':
      clientAuth = { type: 'none' };
      break;
    case 'bearer':
      clientAuth = { type: 'bearer', token: resolveSecret(auth.token, 'auth.token') };
      break;
    case 'oauth2': {
      const secret = resolveSecret(auth.clientSecret, 'auth.clientSecret');
      clientAuth = {
        type: 'oauth2',
        credential: auth.clientId === undefined ? secret : `${auth.clientId}:${secret}`,
        ...(auth.serverUri === undefined ? {} : { serverUri: auth.serverUri }),
        ...(auth.scope === undefined ? {} : { scope: auth.scope }),
      };
      break;
    }
  }
  return {
    name: catalog.name,
    uri: catalog.uri,
    ...(catalog.warehouse === undefined ? {} : { warehouse: catalog.warehouse }),
    properties: catalog.properties,
    auth: clientAuth,
    timeoutMs,
    localFiles: isLocalCatalog(catalog.name, localCatalogs),
  };
}
