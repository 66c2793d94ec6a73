import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, request as forward, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

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
  const upstream = new URL(options.target);
  const tokens = new Set<string>();
  const seen = { tokens: 0, authorized: 0, refused: 0 };
  const json = (res: ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const server: Server = createServer((req, res) => {
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
          json(res, 401, { error: 'invalid_client' });
          return;
        }
        const token = randomBytes(16).toString('hex');
        tokens.add(token);
        seen.tokens += 1;
        json(res, 200, {
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
      json(res, 401, {
        error: { message: 'not authorized', type: 'NotAuthorizedException', code: 401 },
      });
      return;
    }
    seen.authorized += 1;
    const out = forward(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.writeHead(502).end());
    req.pipe(out);
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  return {
    uri: `http://127.0.0.1:${String(port)}`,
    seen,
    close: () =>
      new Promise<void>((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}
