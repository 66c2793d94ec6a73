import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { createLogger, createRedisConnection } from '@icepack/runtime';
import { ServiceProcess } from '@icepack/runtime/testing';
import { startFakeKubeApi, resourceTypeOf } from '@icepack/test/k8s';
import type { FakeKubeApi } from '@icepack/test/k8s';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { RedisStore } from './adapters/redis-store.ts';
import type { GroupView } from './domain/group-record.ts';
import { readBindings } from './testing/binding-reader.ts';
import { startTestProvisioner, TEST_INSTALLATION, TEST_TOKEN } from './testing/test-provisioner.ts';
import { until } from './testing/until.ts';

// The one provisioner test left on the fake API server (test/src/k8s): it holds a request
// unanswered while the process is killed, a fault a real API server cannot be made to
// produce on demand. Everything else runs on the real control plane.
const infra = inject('infra');

let kube: FakeKubeApi;
let suffix: string;
const cleanups: (() => Promise<unknown>)[] = [];

beforeEach(async () => {
  kube = await startFakeKubeApi();
  suffix = randomUUID().slice(0, 8);
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await kube.stop();
});

function exists(plural: string, namespace: string, name: string): boolean {
  try {
    kube.store.get(resourceTypeOf(plural), namespace, name);
    return true;
  } catch {
    return false;
  }
}

describe('provisioner: a crash between steps (fake API server)', () => {
  it('finishes a group whose provisioner was killed right after the namespace step', async () => {
    const prefix = `icepack-test:${randomUUID()}`;
    const catalog = `crash-${suffix}`;
    const namespace = `icepack-${catalog}`;
    const first = await ServiceProcess.start({
      entry: resolve(import.meta.dirname, 'main.ts'),
      env: {
        ICEPACK_KAFKA_BROKERS: infra.kafkaBrokers.join(','),
        ICEPACK_REDIS_URL: infra.redisUrl,
        ICEPACK_API_TOKEN: TEST_TOKEN,
        ICEPACK_KUBE_API_URL: kube.url,
        ICEPACK_INSTALLATION_ID: TEST_INSTALLATION,
        ICEPACK_PROVISIONER_KEY_PREFIX: prefix,
        ICEPACK_RECONCILE_INTERVAL: '1h',
      },
    });
    cleanups.push(() => first.stop('SIGKILL'));
    await first.waitForReadyz((r) => r.status === 200);
    const call = (method: string, path: string, body: unknown) =>
      fetch(`${first.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect(
      (await call('POST', '/v1/catalogs', { name: catalog, type: 'rest', uri: infra.catalogUri }))
        .status,
    ).toBe(201);

    // The quota request never gets an answer: the process dies while waiting for it.
    const hold = kube.hold((method, path) => method === 'POST' && path.endsWith('/resourcequotas'));
    const pending = call('POST', '/v1/resource-groups', {
      name: catalog,
      catalog,
      cpu: '4',
      memory: '8Gi',
      slots: 1,
    }).catch(() => undefined);
    await until('the quota request', () => hold.held() === 1);
    expect(exists('namespaces', '', namespace)).toBe(true);
    await first.stop('SIGKILL');
    await pending;
    await until('the fake API server to see the caller gone', () => hold.held() === 0);
    hold.release();
    expect(exists('resourcequotas', namespace, 'icepack')).toBe(false);

    const logger = createLogger({ service: 'test', level: 'silent' });
    const redis = createRedisConnection(infra.redisUrl, { role: 'client', logger });
    cleanups.push(() => redis.close());
    const persisted = await new RedisStore(redis.redis, prefix).getGroup(catalog);
    expect(persisted?.phase).toBe('provisioning');
    expect(persisted?.steps.namespace.state).toBe('done');
    expect(persisted?.steps.resourceQuota.state).toBe('pending');

    const reader = await readBindings(infra.kafkaBrokers, new Set([catalog]));
    cleanups.push(() => reader.stop());
    // A new provisioner on the same Redis: its start-up reconcile completes the rest.
    const second = await startTestProvisioner({ infra, kubeUrl: kube.url, prefix });
    cleanups.push(() => second.stop());
    const group = await second.api<GroupView>('GET', `/v1/resource-groups/${catalog}`);
    expect(group.body.status.phase).toBe('ready');
    expect(group.body.status.steps.every((step) => step.state === 'done')).toBe(true);
    for (const [plural, name] of [
      ['resourcequotas', 'icepack'],
      ['limitranges', 'icepack'],
      ['configmaps', 'icepack-spark'],
      ['serviceaccounts', 'icepack-spark'],
    ] as const) {
      expect(exists(plural, namespace, name)).toBe(true);
    }
    await until('the ready binding', () => reader.events.find((e) => e.binding?.state === 'ready'));
  });
});
