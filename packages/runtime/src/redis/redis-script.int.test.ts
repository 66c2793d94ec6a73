import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { createLogger } from '../logger/create-logger.ts';
import { createRedisConnection, type RedisConnection } from './create-redis-connection.ts';
import { RedisScript } from './redis-script.ts';

const infra = inject('infra');
const logger = createLogger({
  service: 'redis-script-int-test',
  level: 'warn',
  destination: new Writable({ write: (_c, _e, cb) => cb() }),
});
const opened: RedisConnection[] = [];
afterEach(async () => {
  for (const c of opened.splice(0)) await c.close().catch(() => undefined);
});

describe.each([
  ['a plain connection', {}],
  ['an auto-pipelining connection (the planner)', { enableAutoPipelining: true }],
])('RedisScript on %s', (_name, options) => {
  const connect = () => {
    const c = createRedisConnection(infra.redisUrl, { role: 'client', logger, redis: options });
    opened.push(c);
    return c.redis;
  };

  it('sends its text once, when Redis lacks it, and its SHA1 after', async () => {
    const redis = connect();
    // A text no one ran before: Redis answers its first EVALSHA with NOSCRIPT (no SCRIPT FLUSH,
    // which would disturb every other client of the shared Redis).
    const script = new RedisScript(`-- ${randomUUID()}\nreturn {KEYS[1], ARGV[1], ARGV[2]}`);
    const key = `redis-script-test:${randomUUID()}`;
    expect(await redis.script('EXISTS', script.sha)).toEqual([0]);
    const evals = vi.spyOn(redis, 'eval');
    expect(await script.run(redis, [key], ['a', 7])).toEqual([key, 'a', '7']);
    expect(evals).toHaveBeenCalledTimes(1);
    expect(await redis.script('EXISTS', script.sha)).toEqual([1]);
    expect(await script.run(redis, [key], ['b', 8])).toEqual([key, 'b', '8']);
    expect(evals).toHaveBeenCalledTimes(1);
  });

  it("runs a script once: its own error is the caller's, never a second run", async () => {
    const redis = connect();
    const key = `redis-script-test:${randomUUID()}`;
    const script = new RedisScript(
      `-- ${randomUUID()}\nredis.call('INCR', KEYS[1])\nreturn redis.error_reply('boom')`,
    );
    const evals = vi.spyOn(redis, 'eval');
    await expect(script.run(redis, [key], [])).rejects.toThrow('boom');
    await expect(script.run(redis, [key], [])).rejects.toThrow('boom');
    expect(evals).toHaveBeenCalledTimes(1);
    expect(await redis.get(key)).toBe('2');
    await redis.del(key);
  });
});
