import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * A Lua script sent by its SHA1 (`EVALSHA`): its text goes over the wire only when Redis lacks
 * it (`NOSCRIPT`, after a restart or a `SCRIPT FLUSH`), and that `EVAL` caches it again. A
 * NOSCRIPT reply means the script did not run, so the fallback never runs it twice.
 *
 * Why not ioredis's `defineCommand`: it adds a method to the shared connection, and ioredis
 * copies every defined script into each `Pipeline` it builds — with auto-pipelining one per
 * batch (ADR 0034 measured that copy). Sending each script's text with every `EVAL` was ~1.7 KB
 * of the ~22 KB the planner writes per table state (issue 17 point 6, ADR 0039).
 */
export class RedisScript {
  readonly sha: string;
  readonly lua: string;

  constructor(lua: string) {
    this.lua = lua;
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  /** The script's reply; `keys` are its KEYS, `args` its ARGV (a Buffer is sent as its bytes). */
  async run(
    redis: Redis,
    keys: readonly string[],
    args: readonly (string | number | Buffer)[],
  ): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.lua, keys.length, ...keys, ...args);
    }
  }
}
