/**
 * When to refresh a credential that expires (an OAuth2 token, vended S3 credentials). Pure:
 * the clock is passed in.
 */

/** Vended S3 credentials are refreshed this long before they expire by default (5 min). */
export const DEFAULT_CREDENTIAL_REFRESH_MARGIN_MS = 5 * 60_000;

/** A credential's lifetime, as epoch ms. `expiresAtMs` is Infinity when it never expires. */
export interface CredentialLifetime {
  readonly issuedAtMs: number;
  readonly expiresAtMs: number;
}

/**
 * The moment to refresh: `marginMs` before expiry, but never earlier than half the lifetime
 * (a token that lives 2 minutes is not refreshed at once). Infinity for a credential that
 * never expires.
 */
export function refreshAtMs(lifetime: CredentialLifetime, marginMs: number): number {
  const { issuedAtMs, expiresAtMs } = lifetime;
  if (!Number.isFinite(expiresAtMs)) return Infinity;
  const span = Math.max(0, expiresAtMs - issuedAtMs);
  return expiresAtMs - Math.min(Math.max(0, marginMs), span / 2);
}

/** Whether the credential must be refreshed at `nowMs` (before it is used). */
export function refreshDue(nowMs: number, lifetime: CredentialLifetime, marginMs: number): boolean {
  return nowMs >= refreshAtMs(lifetime, marginMs);
}

/** Whether it has expired: past this, a failed refresh cannot fall back on it. */
export function expired(nowMs: number, lifetime: CredentialLifetime): boolean {
  return nowMs >= lifetime.expiresAtMs;
}
