import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import type { CheckResult } from '../http/readiness.ts';
import { backoffDelay } from '../retry/backoff.ts';
import { evictionPolicyWarning } from './eviction-policy.ts';

/**
 * What a connection is for; BullMQ wants different settings for each:
 * - `worker`: BullMQ `Worker`s (blocking commands). `maxRetriesPerRequest: null` — BullMQ
 *   requires it, so a worker waits out a Redis outage instead of failing its loop.
 * - `producer`: BullMQ `Queue`s that add jobs from request or message handlers.
 *   `enableOfflineQueue: false` — while Redis is down, `add` fails at once, so the caller
 *   does not commit its Kafka offset (or answers 503) instead of hanging.
 * - `client`: plain commands (locks, caches). Commands wait in the offline queue and are
 *   retried up to 3 times across reconnects.
 */
export const RedisRole = {
  worker: 'worker',
  producer: 'producer',
  client: 'client',
} as const;
export type RedisRole = (typeof RedisRole)[keyof typeof RedisRole];

export interface RedisConnectionOptions {
  readonly role: RedisRole;
  readonly logger: Logger;
  /** Name shown in `CLIENT LIST` and logs. Default `icepack-<role>`. */
  readonly connectionName?: string;
  /** Time to establish a connection. Default 5000 ms. */
  readonly connectTimeoutMs?: number;
  /** First reconnect delay, doubling with jitter. Default 100 ms. */
  readonly reconnectInitialMs?: number;
  /** Longest reconnect delay. Default 10 000 ms. Reconnecting never stops. */
  readonly reconnectMaxMs?: number;
  /** Extra ioredis options, applied last. Default none. */
  readonly redis?: RedisOptions;
}

export interface RedisConnection {
  /** Pass this to BullMQ as `connection`. */
  readonly redis: Redis;
  readonly role: RedisRole;
  /** Ready when connected and answering PING; the detail names the last error otherwise. */
  health(timeoutMs?: number): Promise<CheckResult>;
  /** QUITs (waiting for replies in flight), or disconnects if Redis is unreachable. */
  close(): Promise<void>;
}

/**
 * An ioredis connection configured for `role`, reconnecting forever with capped, jittered
 * backoff; errors are logged (never thrown as unhandled `error` events). On every connect
 * it checks `maxmemory-policy` and warns unless it is `noeviction`.
 */
export function createRedisConnection(
  url: string,
  options: RedisConnectionOptions,
): RedisConnection {
  const { role } = options;
  const logger = options.logger.child({ component: 'redis', role });
  const roleOptions: RedisOptions =
    role === 'worker'
      ? { maxRetriesPerRequest: null }
      : role === 'producer'
        ? { enableOfflineQueue: false, maxRetriesPerRequest: 1 }
        : { maxRetriesPerRequest: 3 };
  const redis = new Redis(url, {
    connectionName: options.connectionName ?? `icepack-${role}`,
    connectTimeout: options.connectTimeoutMs ?? 5_000,
    retryStrategy: (times) =>
      backoffDelay(times, {
        initialMs: options.reconnectInitialMs ?? 100,
        maxMs: options.reconnectMaxMs ?? 10_000,
      }),
    ...roleOptions,
    ...options.redis,
  });

  let lastError: string | undefined;
  let failures = 0;
  const user = options.redis?.username ?? (decodeURIComponent(new URL(url).username) || 'default');
  redis.on('error', (error: Error) => {
    lastError = authProblem(error.message, user) ?? error.message;
    failures++;
    // An outage produces one error per reconnect attempt: log the first and then every 10th.
    if (failures === 1 || failures % 10 === 0) {
      logger.warn(
        { err: error, failures, detail: lastError },
        'redis connection error; reconnecting',
      );
    }
  });
  redis.on('ready', () => {
    if (failures > 0) logger.info({ failures }, 'redis connection restored');
    failures = 0;
    lastError = undefined;
    void checkEvictionPolicy(redis, logger);
  });

  return {
    redis,
    role,
    async health(timeoutMs = 1_000) {
      if (redis.status !== 'ready') {
        return {
          ok: false,
          detail: `${redis.status}${lastError === undefined ? '' : `: ${lastError}`}`,
        };
      }
      let timer: NodeJS.Timeout | undefined;
      try {
        const timeout = new Promise<never>((_resolve, reject) => {
          timer = setTimeout(
            () => reject(new Error(`PING timed out after ${timeoutMs}ms`)),
            timeoutMs,
          );
        });
        await Promise.race([redis.ping(), timeout]);
        return { ok: true };
      } catch (error) {
        return { ok: false, detail: (error as Error).message };
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      if (redis.status === 'ready') {
        await redis.quit().catch(() => redis.disconnect());
      } else {
        redis.disconnect();
      }
    },
  };
}

/**
 * A refused login, said plainly: which user, and which variables to check. Redis's own reply
 * (`WRONGPASS …`, `NOAUTH …`) never quotes the password, and neither does this.
 */
function authProblem(message: string, user: string): string | undefined {
  if (!/^(WRONGPASS|NOAUTH)\b/.test(message)) return undefined;
  return `authentication as ${user} failed (check ICEPACK_REDIS_USERNAME and ICEPACK_REDIS_PASSWORD or the URL's credentials): ${message}`;
}

async function checkEvictionPolicy(redis: Redis, logger: Logger): Promise<void> {
  try {
    const reply = (await redis.config('GET', 'maxmemory-policy')) as string[];
    const warning = evictionPolicyWarning(reply[1]);
    if (warning !== undefined) logger.warn({ maxmemoryPolicy: reply[1] }, warning);
    else logger.debug({ maxmemoryPolicy: reply[1] }, 'redis eviction policy checked');
  } catch (error) {
    // Managed Redis often forbids CONFIG; not knowing is not an error.
    logger.debug({ err: error }, 'could not read maxmemory-policy');
  }
}
