import { z } from 'zod';
import { parseWith } from './validation-error.ts';
import { dnsLabel, stringMap } from './primitives.ts';
import {
  hasUrlCredentials,
  rejectInlineSecrets,
  secretRefSchema,
  URL_CREDENTIALS_MESSAGE,
} from './secret-ref.ts';

/** An http(s) URL without `user:password@`: catalog definitions are published and logged. */
const httpUrl = (error?: string) =>
  z
    .url({ protocol: /^https?$/, ...(error === undefined ? {} : { error }) })
    .refine((url) => !hasUrlCredentials(url), URL_CREDENTIALS_MESSAGE);

export const CatalogAuthType = { none: 'none', bearer: 'bearer', oauth2: 'oauth2' } as const;
export type CatalogAuthType = (typeof CatalogAuthType)[keyof typeof CatalogAuthType];

export const catalogAuthSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal(CatalogAuthType.none) }),
  z.strictObject({ type: z.literal(CatalogAuthType.bearer), token: secretRefSchema }),
  z.strictObject({
    type: z.literal(CatalogAuthType.oauth2),
    /** Token endpoint (`oauth2-server-uri`); default: the catalog's own. */
    serverUri: httpUrl().optional(),
    clientId: z.string().min(1).optional(),
    clientSecret: secretRefSchema,
    /** Default `catalog`. */
    scope: z.string().min(1).optional(),
  }),
]);

export const catalogPolicySchema = z.strictObject({
  settings: stringMap.default({}),
  namespaces: z.record(z.string().min(1), stringMap).default({}),
});
export type CatalogPolicyDefinition = z.output<typeof catalogPolicySchema>;

/**
 * An Iceberg REST catalog Icepack maintains. Holds secret references only, so it may be
 * published on `icepack.catalogs` and logged. Unknown keys are rejected (API body).
 */
export const catalogSchema = z.strictObject({
  /** Used in queue names, namespaces and keys. */
  name: dnsLabel(63),
  type: z.literal('rest'),
  uri: httpUrl('expected an http(s) URL'),
  warehouse: z
    .string()
    .min(1)
    .refine((value) => !hasUrlCredentials(value), URL_CREDENTIALS_MESSAGE)
    .optional(),
  auth: catalogAuthSchema.default({ type: 'none' }),
  /**
   * The provisioner's connectivity check sends the resolved credential only when this is
   * true (the operator vouches for `uri`); otherwise it probes without credentials.
   */
  probeCredentials: z.boolean().optional(),
  /** Extra catalog client properties; secrets are not allowed here. */
  properties: stringMap.superRefine(rejectInlineSecrets).default({}),
  /**
   * Maintenance policy above the tables (`icepack.*` keys, docs/planner.md): catalog-wide
   * `settings`, and per namespace (dotted name) settings that override them. A table's own
   * properties override both. The values are checked by `@icepack/policy` where a catalog is
   * defined (the provisioner); this schema checks the shape.
   */
  policy: catalogPolicySchema.optional(),
});
export type Catalog = z.output<typeof catalogSchema>;
export type CatalogInput = z.input<typeof catalogSchema>;

const [noAuth, bearerAuth, oauth2Auth] = catalogAuthSchema.options;

/**
 * `catalogSchema` as `CatalogDefined` on `icepack.catalogs` carries it: unknown keys are
 * ignored at every level (docs/messages.md, "Versioning"), so a field a newer provisioner adds
 * does not dead-letter the catalog on an older consumer — except in a secret reference, whose
 * shape says where the secret is. The API body and the declarative files stay strict.
 */
export const publishedCatalogSchema = catalogSchema.strip().extend({
  auth: z
    .discriminatedUnion('type', [noAuth.strip(), bearerAuth.strip(), oauth2Auth.strip()])
    .default({ type: 'none' }),
  policy: catalogPolicySchema.strip().optional(),
});
export type CatalogAuth = z.output<typeof catalogAuthSchema>;

/** Validates a catalog definition (API body, declarative file); throws `ValidationError`. */
export function parseCatalog(value: unknown): Catalog {
  return parseWith(catalogSchema, value, 'catalog');
}

/**
 * The Spark conf that makes `catalog` an Iceberg REST catalog named like it: what a job needs
 * besides its credential, which is never here (secret-looking keys are refused in
 * `properties`). One home for the provisioner's `spark-defaults.conf` and the dispatcher's
 * SparkApplication `sparkConf`.
 */
export function catalogSparkConf(
  catalog: Pick<Catalog, 'name' | 'uri' | 'warehouse' | 'auth' | 'properties'>,
): Record<string, string> {
  const prefix = `spark.sql.catalog.${catalog.name}`;
  const conf: Record<string, string> = {
    [prefix]: 'org.apache.iceberg.spark.SparkCatalog',
    [`${prefix}.type`]: 'rest',
    [`${prefix}.uri`]: catalog.uri,
  };
  if (catalog.warehouse !== undefined) conf[`${prefix}.warehouse`] = catalog.warehouse;
  // Ask for vended storage credentials, as Icepack's own client does (`vendedCredentials`):
  // the job then reaches storage like the scanner and the figures read — with what the
  // catalog vends, else the S3 keys of its environment — and not through a catalog's remote
  // signing (Nessie's default without it), whose signer asks for an OAuth2 scope of its own
  // (ADR 0037). A catalog's properties may override.
  conf[`${prefix}.header.X-Iceberg-Access-Delegation`] = 'vended-credentials';
  if (catalog.auth.type === CatalogAuthType.oauth2) {
    if (catalog.auth.serverUri !== undefined) {
      conf[`${prefix}.oauth2-server-uri`] = catalog.auth.serverUri;
    }
    if (catalog.auth.scope !== undefined) conf[`${prefix}.scope`] = catalog.auth.scope;
    // A job outlives its first token: Iceberg refreshes it before it expires (its default,
    // stated so the conf shows it). Refresh asks for a new client-credentials token, not an
    // RFC 8693 exchange of the old one, which Iceberg tries by default and issuers such as
    // Keycloak refuse without extra setup (ADR 0037). A catalog's properties may override.
    conf[`${prefix}.token-refresh-enabled`] = 'true';
    conf[`${prefix}.token-exchange-enabled`] = 'false';
  }
  for (const [key, value] of Object.entries(catalog.properties)) conf[`${prefix}.${key}`] = value;
  return conf;
}
