import type { CatalogAccessPolicy } from '@icepack/runtime';
import {
  defaultCatalogAccessPolicy,
  resolvedAddressProblem,
  SecretResolutionError,
  secretResolver,
} from '@icepack/runtime';
import type { Catalog } from '@icepack/types';
import type { Connectivity } from '../domain/catalog-record.ts';

export interface CatalogProbeOptions {
  /** Time the catalog gets to answer. Default 5000 ms. */
  readonly timeoutMs?: number;
  /** Where `{env}` secret references are looked up. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Allowed secret sources and catalog addresses. Default {@link defaultCatalogAccessPolicy}. */
  readonly policy?: CatalogAccessPolicy;
}

/** Checks a catalog answers `GET {uri}/v1/config`; never throws. */
export type CatalogProbe = (catalog: Catalog) => Promise<Connectivity>;

/**
 * The connectivity check of a catalog. The credential is resolved and sent only when the
 * catalog definition opts in (`probeCredentials: true`), so registering a catalog cannot
 * send the provisioner's secrets to an address the caller chose; without it, a 401/403
 * counts as reachable ("authentication not checked"). Link-local and metadata addresses
 * (also behind a DNS name) are not called unless the policy allows them; redirects are not
 * followed.
 */
export function catalogProbe(options: CatalogProbeOptions = {}): CatalogProbe {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const policy = options.policy ?? defaultCatalogAccessPolicy;
  const resolve = secretResolver(options.env ?? process.env, policy);
  return async (catalog) => {
    const checkedAt = new Date().toISOString();
    const url = new URL(`${catalog.uri.replace(/\/+$/, '')}/v1/config`);
    if (catalog.warehouse !== undefined) url.searchParams.set('warehouse', catalog.warehouse);
    const headers: Record<string, string> = { accept: 'application/json' };
    let authChecked = catalog.auth.type === 'none';
    try {
      const refused = policy.allowLinkLocal ? undefined : await resolvedAddressProblem(url.href);
      if (refused !== undefined) return { ok: false, checkedAt, message: `refused: ${refused}` };
      if (catalog.auth.type === 'bearer' && catalog.probeCredentials === true) {
        headers.authorization = `Bearer ${resolve(catalog.auth.token, 'auth.token')}`;
        authChecked = true;
      }
      const response = await fetch(url, {
        headers,
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.body?.cancel();
      if (response.ok)
        return {
          ok: true,
          checkedAt,
          status: response.status,
          message: 'reachable: GET /v1/config answered 200',
        };
      if ((response.status === 401 || response.status === 403) && !authChecked) {
        return {
          ok: true,
          checkedAt,
          status: response.status,
          message:
            catalog.auth.type === 'bearer'
              ? 'reachable; authentication not checked (probeCredentials is not set)'
              : `reachable; authentication not checked (${catalog.auth.type} credentials are not exchanged by the provisioner)`,
        };
      }
      return {
        ok: false,
        checkedAt,
        status: response.status,
        message: `GET /v1/config answered HTTP ${response.status}`,
      };
    } catch (error) {
      if (error instanceof SecretResolutionError)
        return { ok: false, checkedAt, message: error.message };
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      return {
        ok: false,
        checkedAt,
        message: `unreachable: ${(error as Error).message}${cause === undefined ? '' : ` (${cause})`}`,
      };
    }
  };
}
