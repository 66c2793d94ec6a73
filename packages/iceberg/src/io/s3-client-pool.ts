import { createHash } from 'node:crypto';
import {
  DEFAULT_CREDENTIAL_REFRESH_MARGIN_MS,
  expired,
  refreshDue,
  type CredentialLifetime,
} from '../credentials/refresh-decision.ts';
import {
  S3FileIO,
  S3Properties,
  s3OptionsFromProperties,
  type S3Credentials,
  type S3FileIOOptions,
} from './s3-file-io.ts';

/** Fetches fresh S3 properties (vended credentials) for a prefix; undefined when none come. */
export type RefreshS3Credentials = () => Promise<Readonly<Record<string, string>> | undefined>;

export interface S3ClientPoolOptions {
  /** Most S3 clients kept; the least recently used is closed beyond it. Default 32. */
  readonly maxClients?: number;
  /** Refresh expiring credentials this long before they expire. Default 5 min. */
  readonly refreshMarginMs?: number;
  /**
   * Credentials when neither the catalog's properties nor vended credentials carry any.
   * Default: the SDK's default chain, resolved once per client (and again near expiry).
   */
  readonly defaultCredentials?: S3Credentials;
  readonly now?: () => number;
}

export const DEFAULT_MAX_S3_CLIENTS = 32;

type StaticCredentials = Extract<S3Credentials, { accessKeyId: string }>;

/** The latest credentials of a prefix whose credentials expire, refreshed in place. */
export interface ExpiringCredentials {
  current: StaticCredentials;
  lifetime: CredentialLifetime;
  refresh: RefreshS3Credentials | undefined;
  pending: Promise<void> | undefined;
}

interface Entry {
  readonly io: S3FileIO;
  readonly expiring: ExpiringCredentials | undefined;
}

/**
 * S3 clients of one catalog, reused across table loads: one per connection settings and
 * credential set, at most `maxClients`, the least recently used closed on eviction
 * (ADR 0019). Credentials that expire (`s3.session-token-expires-at-ms`) are keyed by their
 * prefix, not their value, and refreshed in place before they expire, so a new set vended
 * for the same prefix keeps the client and its connections.
 */
export class S3ClientPool {
  readonly #entries = new Map<string, Entry>();
  readonly #max: number;
  readonly #marginMs: number;
  readonly #now: () => number;
  readonly #defaultCredentials: S3Credentials | undefined;
  /** Clients built and closed so far (tests, metrics). */
  created = 0;
  evicted = 0;

  constructor(options: S3ClientPoolOptions = {}) {
    this.#max = Math.max(1, options.maxClients ?? DEFAULT_MAX_S3_CLIENTS);
    this.#marginMs = options.refreshMarginMs ?? DEFAULT_CREDENTIAL_REFRESH_MARGIN_MS;
    this.#now = options.now ?? Date.now;
    this.#defaultCredentials = options.defaultCredentials;
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * The client for these S3 properties (catalog and table config merged with the vended
   * credential of `prefix`, if any). `refresh` fetches the prefix's credentials again.
   */
  client(
    properties: Readonly<Record<string, string>>,
    prefix: string,
    refresh?: RefreshS3Credentials,
  ): S3FileIO {
    const options = s3OptionsFromProperties(properties);
    const expiresAt = expiresAtMs(properties);
    const credentials = options.credentials as StaticCredentials | undefined;
    const connection = {
      region: options.region ?? null,
      endpoint: options.endpoint ?? null,
      pathStyle: options.pathStyle ?? false,
    };
    // Secrets enter the key only hashed; the key is never logged anyway.
    const key = digest(
      credentials === undefined
        ? { ...connection, credentials: 'default' }
        : expiresAt === undefined
          ? { ...connection, credentials }
          : { ...connection, expiringPrefix: prefix },
    );
    const found = this.#entries.get(key);
    if (found !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, found); // most recently used last
      if (found.expiring !== undefined && credentials !== undefined && expiresAt !== undefined) {
        adopt(found.expiring, credentials, expiresAt, this.#now());
        if (refresh !== undefined) found.expiring.refresh = refresh;
      }
      return found.io;
    }
    let expiring: ExpiringCredentials | undefined;
    let clientCredentials: S3Credentials | undefined = credentials ?? this.#defaultCredentials;
    if (credentials !== undefined && expiresAt !== undefined) {
      const state: ExpiringCredentials = {
        current: credentials,
        lifetime: { issuedAtMs: this.#now(), expiresAtMs: expiresAt },
        refresh,
        pending: undefined,
      };
      expiring = state;
      clientCredentials = () => this.#provide(state);
    }
    const io = new S3FileIO(
      clientCredentials === undefined
        ? withoutCredentials(options)
        : { ...options, credentials: clientCredentials },
    );
    this.created++;
    this.#entries.set(key, { io, expiring });
    while (this.#entries.size > this.#max) {
      const [oldest, entry] = this.#entries.entries().next().value!;
      this.#entries.delete(oldest);
      entry.io.destroy();
      this.evicted++;
    }
    return io;
  }

  /** Closes every client (their reads under way finish first). */
  close(): void {
    for (const entry of this.#entries.values()) entry.io.destroy();
    this.#entries.clear();
  }

  /** What the SDK gets when it asks (first use, and within its 5 min of `expiration`). */
  async #provide(state: ExpiringCredentials) {
    await refreshExpiring(state, this.#now, this.#marginMs);
    return { ...state.current, expiration: new Date(state.lifetime.expiresAtMs) };
  }
}

/**
 * Refreshes `state` when the decision says so, one refresh at a time. A failed refresh keeps
 * the current credentials until they expire; past expiry its error is thrown.
 */
export async function refreshExpiring(
  state: ExpiringCredentials,
  now: () => number,
  marginMs: number,
): Promise<void> {
  if (state.refresh === undefined || !refreshDue(now(), state.lifetime, marginMs)) return;
  const refresh = state.refresh;
  state.pending ??= (async () => {
    try {
      const fresh = await refresh();
      const credentials =
        fresh === undefined
          ? undefined
          : (s3OptionsFromProperties(fresh).credentials as StaticCredentials | undefined);
      const expiresAt = fresh === undefined ? undefined : expiresAtMs(fresh);
      if (credentials !== undefined) adopt(state, credentials, expiresAt ?? Infinity, now());
    } catch (error) {
      if (expired(now(), state.lifetime)) throw error;
    } finally {
      state.pending = undefined;
    }
  })();
  await state.pending;
}

/** Takes credentials that expire later than the current ones. */
function adopt(
  state: ExpiringCredentials,
  credentials: StaticCredentials,
  expiresAt: number,
  nowMs: number,
): void {
  if (expiresAt <= state.lifetime.expiresAtMs) return;
  state.current = credentials;
  state.lifetime = { issuedAtMs: nowMs, expiresAtMs: expiresAt };
}

function expiresAtMs(properties: Readonly<Record<string, string>>): number | undefined {
  const text = properties[S3Properties.sessionTokenExpiresAtMs];
  if (text === undefined) return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

function withoutCredentials(options: S3FileIOOptions): S3FileIOOptions {
  const rest = { ...options };
  delete (rest as { credentials?: unknown }).credentials;
  return rest;
}

function digest(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex');
}
