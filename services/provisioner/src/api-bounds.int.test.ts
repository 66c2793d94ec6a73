import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { LocalCluster } from './adapters/local-cluster.ts';
import { startTestProvisioner, TEST_TOKEN } from './testing/test-provisioner.ts';

const infra = inject('infra');
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('provisioner API: oversize bodies', () => {
  it('answers a 3 MB body with 413 naming the limit, and stays up', async () => {
    const p = await startTestProvisioner({
      infra,
      cluster: new LocalCluster({ allocatable: { cpuMillis: 4000, memoryBytes: 16 * 2 ** 30 } }),
    });
    cleanups.push(() => p.stop());
    const name = `big-${randomUUID().slice(0, 8)}`;
    const response = await fetch(`${p.url}/v1/catalogs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name,
        type: 'rest',
        uri: infra.catalogUri,
        properties: { padding: 'x'.repeat(3 * 2 ** 20) },
      }),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      error: 'payload_too_large',
      message: 'request body is larger than the limit of 1048576 bytes',
      limit: 1048576,
    });
    expect((await p.api('GET', `/v1/catalogs/${name}`)).status).toBe(404);
  });
});
