import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { Queue, Worker } from 'bullmq';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { baseConfigSchema } from '../config/base-config.ts';
import { loadConfig } from '../config/load-config.ts';
import { createLogger } from '../logger/create-logger.ts';
import { createRedisConnection } from './create-redis-connection.ts';
import { redisTransport } from './redis-transport.ts';
import type { RedisConnection } from './create-redis-connection.ts';

const infra = inject('infra');
const lines: Record<string, unknown>[] = [];
const logger = createLogger({
  service: 'redis-int-test',
  level: 'debug',
  destination: new Writable({
    write(chunk: Buffer, _e, cb) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      cb();
    },
  }),
});

const opened: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const resource of opened.reverse()) await resource.close().catch(() => undefined);
  opened.length = 0;
});

function connect(role: 'worker' | 'producer' | 'client', url = infra.redisUrl): RedisConnection {
  const connection = createRedisConnection(url, { role, logger });
  opened.push(connection);
  return connection;
}

async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A connection made the way every service makes it: from its environment. */
function connectAs(username: string, password: string): RedisConnection {
  const config = loadConfig(baseConfigSchema('planner'), {
    ICEPACK_KAFKA_BROKERS: '127.0.0.1:1',
    ICEPACK_REDIS_URL: infra.redisUrl,
    ICEPACK_REDIS_USERNAME: username,
    ICEPACK_REDIS_PASSWORD: password,
  });
  const connection = createRedisConnection(config.ICEPACK_REDIS_URL, {
    role: 'producer',
    logger,
    redis: redisTransport(config, () => ''),
  });
  opened.push(connection);
  return connection;
}

describe('createRedisConnection', () => {
  it('connects as a Redis ACL user; a wrong password is named as such and never printed', async () => {
    // An ACL user on the shared Redis, made at test time and removed afterwards.
    const user = `icepack-test-${randomUUID().slice(0, 8)}`;
    const password = `pw-${randomUUID()}`;
    const wrong = `wrong-${randomUUID()}`;
    const admin = connect('client');
    await admin.redis.call(
      'ACL',
      'SETUSER',
      user,
      'on',
      `>${password}`,
      '~*',
      '&*',
      '+@all',
      '-@admin',
    );
    opened.unshift({ close: () => admin.redis.call('ACL', 'DELUSER', user) });

    const good = connectAs(user, password);
    await waitFor('the ACL user to connect', async () => (await good.health()).ok);
    expect(await good.redis.call('ACL', 'WHOAMI')).toBe(user);

    lines.length = 0;
    const bad = connectAs(user, wrong);
    await waitFor('the failed authentication', async () => {
      const health = await bad.health();
      return !health.ok && /WRONGPASS/.test(health.detail ?? '');
    });
    const health = await bad.health();
    expect(health.detail).toMatch(new RegExp(`authentication as ${user} failed`));
    const everything = JSON.stringify([health, lines]);
    expect(everything).toContain('WRONGPASS');
    expect(everything).not.toContain(wrong);
    expect(everything).not.toContain(password);
  });

  it('runs a BullMQ job end to end on the producer and worker connections', async () => {
    const name = `test-rt-${randomUUID().slice(0, 8)}`;
    const producer = connect('producer');
    const worker = connect('worker');
    await waitFor('producer ready', async () => (await producer.health()).ok);
    const queue = new Queue(name, { connection: producer.redis });
    const processed: unknown[] = [];
    const bullWorker = new Worker(
      name,
      async (job) => {
        processed.push(job.data);
        return Promise.resolve({ ok: true });
      },
      { connection: worker.redis },
    );
    opened.push(
      { close: () => queue.obliterate({ force: true }).then(() => queue.close()) },
      { close: () => bullWorker.close() },
    );
    const job = await queue.add(
      'compact',
      { table: 'cat.db.orders', traceparent: '00-x' },
      { jobId: 'cat.db.orders-compact', priority: 10 },
    );
    await waitFor('the job', () => processed.length === 1);
    expect(processed).toEqual([{ table: 'cat.db.orders', traceparent: '00-x' }]);
    await waitFor(
      'completion',
      async () => (await queue.getJobState(job.id ?? '')) === 'completed',
    );
  });

  it('applies the BullMQ settings of each role', () => {
    expect(connect('worker').redis.options.maxRetriesPerRequest).toBeNull();
    expect(connect('producer').redis.options.enableOfflineQueue).toBe(false);
    expect(connect('client').redis.options.maxRetriesPerRequest).toBe(3);
  });

  it('is healthy against the local Redis and does not warn about its noeviction policy', async () => {
    const client = connect('client');
    await waitFor('ready', async () => (await client.health()).ok);
    await waitFor('the policy check', () =>
      lines.some((line) => line.msg === 'redis eviction policy checked'),
    );
    expect(lines.find((line) => line.msg === 'redis eviction policy checked')).toMatchObject({
      maxmemoryPolicy: 'noeviction',
      level: 'debug',
    });
    expect(
      lines.filter(
        (line) => line.level === 'warn' && String(line.msg).includes('maxmemory-policy'),
      ),
    ).toEqual([]);
  });

  it('reports unhealthy with the error, keeps reconnecting, and fails producer commands fast', async () => {
    const closedPort = 'redis://127.0.0.1:1';
    const producer = connect('producer', closedPort);
    await waitFor('a connection error', async () =>
      /ECONNREFUSED/.test((await producer.health()).detail ?? ''),
    );
    const health = await producer.health();
    expect(health.ok).toBe(false);
    await expect(producer.redis.set('k', 'v')).rejects.toThrow(
      /Stream isn't writeable|enableOfflineQueue/,
    );
    expect(['connecting', 'reconnecting', 'connect']).toContain(producer.redis.status);
  });
});
