import { readFile } from 'node:fs/promises';
import type { Catalog, SecretRef } from '@icepack/types';
import type { Connectivity } from '../domain/catalog-record.ts';

export interface CatalogProbeOptions {
  /** Time the catalog gets to answer. Default 5000 ms. */
  readonly timeoutMs?: number;
  /** Where `{env}` secret references are looked up. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
}

/** Checks a catalog answers `GET {uri}/v1/config`; never throws. */
export type CatalogProbe = (catalog: Catalog) => Promise<Connectivity>;

async function resolveSecret(ref: SecretRef, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if ('env' in ref) return env[ref.env];
  if ('file' in ref) return (await readFile(ref.file, 'utf8')).trim();
  return undefined; // A Kubernetes Secret: the jobs read it; the provisioner has no access.
}

/**
 * The connectivity check of a catalog. A bearer token referenced by env var or file is
 * sent; OAuth2 and Kubernetes-Secret credentials are not exchanged here, so such a catalog
 * answering 401 counts as reachable ("authentication not checked").
 */
export function catalogProbe(options: CatalogProbeOptions = {}): CatalogProbe {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const env = options.env ?? process.env;
  return async (catalog) => {
    const checkedAt = new Date().toISOString();
    const url = new URL(`${catalog.uri.replace(/\/+$/, '')}/v1/config`);
    if (catalog.warehouse !== undefined) url.searchParams.set('warehouse', catalog.warehouse);
    const headers: Record<string, string> = { accept: 'application/json' };
    let authChecked = catalog.auth.type === 'none';
    try {
      if (catalog.auth.type === 'bearer') {
        const token = await resolveSecret(catalog.auth.token, env);
        if (token !== undefined && token !== '') {
          headers.authorization = `Bearer ${token}`;
          authChecked = true;
        }
      }
      const response = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
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
          message: `reachable; authentication not checked (${catalog.auth.type} credentials are not exchanged by the provisioner)`,
        };
      }
      return {
        ok: false,
        checkedAt,
        status: response.status,
        message: `GET /v1/config answered HTTP ${response.status}`,
      };
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      return {
        ok: false,
        checkedAt,
        message: `unreachable: ${(error as Error).message}${cause === undefined ? '' : ` (${cause})`}`,
      };
    }
  };
}
