// The dispatcher's quota use for the console, on real Redis: what a local budget's claims
// hold, under the key the planner reads, in the shape it validates, expiring when no longer
// written.
import { randomBytes } from 'node:crypto';
import { createLogger } from '@icepack/runtime';
import { quotaUseKey, quotaUseSchema } from '@icepack/types';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LocalBudgetQuota } from './quota.ts';
import { QuotaUsePublisher } from './quota-use-publisher.ts';
import { testBinding } from './testing/test-binding.ts';

const infra = inject('infra');
const GiB = 2 ** 30;
const binding = {
  ...testBinding(`quse${randomBytes(3).toString('hex')}`),
  cpu: '4',
  memory: '8Gi',
};
let redis: Redis;

beforeAll(() => {
  redis = new Redis(infra.redisUrl);
});

afterAll(async () => {
  await redis.del(quotaUseKey(binding.catalog), `icepack-quse-test:budget:${binding.catalog}`);
  redis.disconnect();
});

describe("the dispatcher's quota use for the console", () => {
  it('publishes what the claims of a local budget hold, expiring after three intervals', async () => {
    const quota = new LocalBudgetQuota({ redis, prefix: 'icepack-quse-test' });
    expect(
      await quota.acquire(binding, 'run-1', { cpuMillicores: 2_000, memoryBytes: 3 * GiB }),
    ).toBe(true);
    const publisher = new QuotaUsePublisher({
      redis,
      quota,
      binding,
      logger: createLogger({ service: 'quota-use-test', level: 'warn' }),
      everyMs: 60_000,
    });
    await publisher.publish();
    const written = quotaUseSchema.parse(
      JSON.parse((await redis.get(quotaUseKey(binding.catalog)))!),
    );
    expect(written).toMatchObject({
      group: binding.namespace,
      source: 'budget',
      cpu: { usedMillicores: 2_000, hardMillicores: 4_000 },
      memory: { usedBytes: 3 * GiB, hardBytes: 8 * GiB },
    });
    const ttl = await redis.pttl(quotaUseKey(binding.catalog));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(180_000);

    // The claim's end shows at the next write.
    await quota.release(binding, 'run-1');
    await publisher.publish();
    expect(JSON.parse((await redis.get(quotaUseKey(binding.catalog)))!)).toMatchObject({
      cpu: { usedMillicores: 0 },
      memory: { usedBytes: 0 },
    });
  });
});
