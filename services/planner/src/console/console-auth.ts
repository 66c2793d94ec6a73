import { requireBearerToken } from '@icepack/runtime';
import type { RequestHandler } from 'express';

export interface ConsoleAuthOptions {
  /** The API token (the same as `/v1`). */
  readonly token: string;
  /**
   * A header an authenticating proxy sets to the signed-in user (e.g. `X-Forwarded-User`).
   * Off (undefined) by default: only trust it when nothing but the proxy can reach the
   * planner, and the proxy strips the header from client requests (docs/security.md).
   */
  readonly trustedUserHeader?: string;
}

/**
 * Lets a request through with the bearer token (user `token`) or, when configured, with the
 * trusted proxy's user header (user = its value); else 401. Sets `res.locals.user`, which
 * the audit log records.
 */
export function consoleAuth(options: ConsoleAuthOptions): RequestHandler {
  const bearer = requireBearerToken(options.token);
  const header = options.trustedUserHeader?.trim();
  return (req, res, next) => {
    if (header !== undefined && header !== '') {
      const user = req.get(header)?.trim();
      if (user !== undefined && user !== '') {
        res.locals.user = `proxy:${user}`;
        next();
        return;
      }
    }
    bearer(req, res, () => {
      res.locals.user = 'token';
      next();
    });
  };
}
