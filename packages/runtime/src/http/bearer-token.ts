import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * Rejects requests without `Authorization: Bearer <token>` with 401. The comparison hashes
 * both sides first so it runs in constant time whatever the lengths, leaking neither the
 * token nor its length.
 */
export function requireBearerToken(token: string): RequestHandler {
  if (token.length === 0) throw new Error('requireBearerToken: the token must not be empty');
  const expected = digest(token);
  return (req, res, next) => {
    const header = req.get('authorization') ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (match?.[1] !== undefined && timingSafeEqual(digest(match[1]), expected)) {
      next();
      return;
    }
    res
      .status(401)
      .set('WWW-Authenticate', 'Bearer realm="icepack"')
      .json({ error: 'unauthorized', message: 'a valid bearer token is required' });
  };
}
