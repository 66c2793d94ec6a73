import { randomBytes, timingSafeEqual } from 'node:crypto';
import { answerJson, notAuthorized, startCatalogProxy } from './catalog-proxy.ts';

export interface OAuth2CatalogProxy {
  /** The catalog's URI; its token endpoint is `{uri}/v1/oauth/tokens` (Iceberg's default). */
  readonly uri: string;
  /** Tokens issued, catalog requests let through with a valid token, and refused (401). */
  readonly seen: { tokens: number; authorized: number; refused: number };
  close(): Promise<void>;
}

export interface OAuth2CatalogProxyOptions {
  /** The catalog behind it (the shared REST catalog's URI). */
  readonly target: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** `expires_in` of the tokens it issues. Default 3600. */
  readonly expiresInSeconds?: number;
}

const same = (a: string, b: string): boolean =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * A stand-in for a catalog that enforces OAuth2 client credentials (docs/testing.md): it
 * issues bearer tokens at `POST /v1/oauth/tokens` for the right client id and secret, and
 * forwards to the real REST catalog only requests that carry one; everything else gets the
 * REST spec's 401.
 */
export async function startOAuth2CatalogProxy(
  options: OAuth2CatalogProxyOptions,
): Promise<OAuth2CatalogProxy> {
  const tokens = new Set<string>();
  const seen = { tokens: 0, authorized: 0, refused: 0 };
  const proxy = await startCatalogProxy(options.target, (req, res, forward) => {
    if (req.method === 'POST' && req.url === '/v1/oauth/tokens') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        if (
          form.get('grant_type') !== 'client_credentials' ||
          !same(form.get('client_id') ?? '', options.clientId) ||
          !same(form.get('client_secret') ?? '', options.clientSecret)
        ) {
          answerJson(res, 401, { error: 'invalid_client' });
          return;
        }
        const token = randomBytes(16).toString('hex');
        tokens.add(token);
        seen.tokens += 1;
        answerJson(res, 200, {
          access_token: token,
          token_type: 'bearer',
          expires_in: options.expiresInSeconds ?? 3600,
          issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        });
      });
      return;
    }
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (bearer === undefined || !tokens.has(bearer)) {
      seen.refused += 1;
      req.resume();
      notAuthorized(res, 'not authorized');
      return;
    }
    seen.authorized += 1;
    forward();
  });
  return { ...proxy, seen };
}
