/** How the client authenticates to the catalog. Secrets are passed in, never logged. */
export type RestCatalogAuth =
  | { readonly type: 'none' }
  | { readonly type: 'bearer'; readonly token: string }
  | {
      readonly type: 'oauth2';
      /** `client_id:client_secret` (Iceberg's `credential` property). */
      readonly credential: string;
      /** Token endpoint; default: `oauth2-server-uri` from config, else `{uri}/v1/oauth/tokens`. */
      readonly serverUri?: string;
      /** Default: `catalog`. */
      readonly scope?: string;
    };

export const DEFAULT_OAUTH2_SCOPE = 'catalog';
