import { z } from 'zod';
import { commaList, flag } from '../config/fields.ts';
import type { CatalogAccessPolicy } from './catalog-access-policy.ts';
import { DEFAULT_SECRET_ENV_PREFIX, DEFAULT_SECRETS_DIR } from './catalog-access-policy.ts';

/**
 * Catalogs configured as local, comma-separated (`*`: all): only their `file:` locations are
 * read from this machine (the scanner's table reads, the dispatcher's before/after figures).
 * Default none: a catalog that points at `file:` without being configured so is refused. A
 * catalog definition cannot say so itself: it comes from the API or Kafka.
 */
export const localCatalogsConfig = {
  ICEPACK_LOCAL_CATALOGS: commaList(),
};

/** Whether `file:` locations of catalog `name` may be read here (`ICEPACK_LOCAL_CATALOGS`). */
export function isLocalCatalog(name: string, localCatalogs: readonly string[]): boolean {
  return localCatalogs.includes('*') || localCatalogs.includes(name);
}

/**
 * The variables of the services that call catalogs (provisioner, metadata-scanner, dispatcher).
 * The ones that read table files (metadata-scanner, dispatcher) add `localCatalogsConfig`.
 */
export const catalogAccessConfig = {
  /** `{env}` secret references must start with this. */
  ICEPACK_SECRET_ENV_PREFIX: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected the start of an environment variable name')
    .default(DEFAULT_SECRET_ENV_PREFIX),
  /** `{file}` references must be under this directory; `{secret}` ones resolve in it. */
  ICEPACK_SECRETS_DIR: z
    .string()
    .startsWith('/', 'expected an absolute directory')
    .refine((dir) => dir !== '/', 'expected a directory other than /')
    .default(DEFAULT_SECRETS_DIR),
  /** Allow catalogs on link-local and cloud-metadata addresses. */
  ICEPACK_CATALOG_ALLOW_LINK_LOCAL: flag().default(false),
};

type CatalogAccessConfig = z.output<z.ZodObject<typeof catalogAccessConfig>>;

export function catalogAccessPolicy(config: CatalogAccessConfig): CatalogAccessPolicy {
  return {
    secretEnvPrefix: config.ICEPACK_SECRET_ENV_PREFIX,
    secretsDir: config.ICEPACK_SECRETS_DIR,
    allowLinkLocal: config.ICEPACK_CATALOG_ALLOW_LINK_LOCAL,
  };
}
