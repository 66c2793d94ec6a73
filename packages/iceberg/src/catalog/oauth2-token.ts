import { IcebergError, IcebergErrorKind } from '../errors/iceberg-error.ts';
import { refreshAtMs } from '../credentials/refresh-decision.ts';
import { DEFAULT_MAX_RESPONSE_BYTES, readBoundedText } from './bounded-body.ts';

export interface OAuth2TokenOptions {
  readonly serverUri: string;
  readonly credential: string;
  readonly scope: string;
  /** Refresh this long before expiry. Default: 60 s (or half the lifetime, if shorter). */
  readonly refreshMarginMs?: number;
  readonly timeoutMs: number;
  /** Largest token response read. Default {@link DEFAULT_MAX_RESPONSE_BYTES}. */
  readonly maxResponseBytes?: number;
  readonly now?: () => number;
}

interface Token {
  readonly value: string;
  /** Epoch ms; Infinity when the server sent no `expires_in`. */
  readonly expiresAtMs: number;
  readonly refreshAtMs: number;
}

const CALL = 'POST oauth2 token';

/**
 * OAuth2 client-credentials tokens: fetched on first use, refreshed before they expire
 * (and on demand after a 401), one request at a time however many callers wait.
 */
export class OAuth2TokenSource {
  readonly #options: OAuth2TokenOptions;
  #token: Token | undefined;
  #pending: Promise<Token> | undefined;
  /** Tokens fetched so far (for tests and metrics). */
  fetched = 0;

  constructor(options: OAuth2TokenOptions) {
    this.#options = options;
  }

  async token(signal?: AbortSignal): Promise<string> {
    const now = (this.#options.now ?? Date.now)();
    const current = this.#token;
    if (current !== undefined && now < current.refreshAtMs) return current.value;
    this.#pending ??= this.#fetch(signal).finally(() => {
      this.#pending = undefined;
    });
    return (await this.#pending).value;
  }

  /** Forget the token (the catalog rejected it); the next call fetches a new one. */
  invalidate(): void {
    this.#token = undefined;
  }

  async #fetch(signal?: AbortSignal): Promise<Token> {
    const { serverUri, credential, scope, timeoutMs } = this.#options;
    const colon = credential.indexOf(':');
    const form = new URLSearchParams({ grant_type: 'client_credentials', scope });
    if (colon === -1) {
      form.set('client_secret', credential);
    } else {
      form.set('client_id', credential.slice(0, colon));
      form.set('client_secret', credential.slice(colon + 1));
    }
    const timeout = AbortSignal.timeout(timeoutMs);
    let response: Response;
    try {
      response = await fetch(serverUri, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: form.toString(),
        // A 307/308 would re-send the client secret to wherever the Location points, link-local
        // and metadata addresses included: redirects are not followed.
        redirect: 'manual',
        signal: signal === undefined ? timeout : AbortSignal.any([timeout, signal]),
      });
    } catch (error) {
      const kind = timeout.aborted ? IcebergErrorKind.timeout : IcebergErrorKind.connection;
      throw new IcebergError(kind, `token request failed: ${(error as Error).message}`, {
        call: CALL,
        cause: error,
      });
    }
    const text = await readBoundedText(
      response,
      this.#options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      CALL,
    );
    if (!response.ok) {
      const kind =
        response.status === 400 || response.status === 401
          ? IcebergErrorKind.unauthorized
          : response.status === 403
            ? IcebergErrorKind.forbidden
            : response.status >= 500
              ? IcebergErrorKind.server
              : IcebergErrorKind.badResponse;
      // The body of a token error names the OAuth2 error code; it never echoes the secret.
      throw new IcebergError(
        kind,
        `token request rejected with HTTP ${response.status}: ${text.slice(0, 200)}`,
        {
          call: CALL,
          status: response.status,
        },
      );
    }
    let body: { access_token?: unknown; expires_in?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch (error) {
      throw new IcebergError(IcebergErrorKind.badResponse, 'token response is not JSON', {
        call: CALL,
        cause: error,
      });
    }
    if (typeof body.access_token !== 'string' || body.access_token === '') {
      throw new IcebergError(IcebergErrorKind.badResponse, 'token response has no access_token', {
        call: CALL,
      });
    }
    const now = (this.#options.now ?? Date.now)();
    const lifetimeMs =
      typeof body.expires_in === 'number' && body.expires_in > 0
        ? body.expires_in * 1000
        : Infinity;
    this.fetched++;
    const lifetime = { issuedAtMs: now, expiresAtMs: now + lifetimeMs };
    const token = {
      value: body.access_token,
      expiresAtMs: lifetime.expiresAtMs,
      refreshAtMs: refreshAtMs(lifetime, this.#options.refreshMarginMs ?? 60_000),
    };
    this.#token = token;
    return token;
  }
}
