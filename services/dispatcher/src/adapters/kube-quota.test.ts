import { setTimeout as sleep } from 'node:timers/promises';
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type V1ResourceQuota,
} from '@kubernetes/client-node';
import { kubeConfigFor, startFakeKubeApi, type FakeKubeApi } from '@icepack/test/k8s';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { QuotaRoom } from '../domain/sizing.ts';
import { SPARK_API } from '../runners/spark-application.ts';
import { KubeQuota, useOf } from './kube-quota.ts';
import { testBinding } from './testing/test-binding.ts';

const GiB = 2 ** 30;
const binding = testBinding('team', { runner: 'spark-operator', namespace: 'icepack-team' });
const cpu = (millicores: number) => ({ cpuMillicores: millicores, memoryBytes: GiB });

let api: FakeKubeApi;
let kc: KubeConfig;
let core: CoreV1Api;
const gates: KubeQuota[] = [];

function gate(settleMs?: number): KubeQuota {
  const quota = new KubeQuota(kc, settleMs === undefined ? {} : { settleMs });
  gates.push(quota);
  return quota;
}

async function addQuota(name: string, hard: Record<string, string>): Promise<void> {
  await core.createNamespacedResourceQuota({
    namespace: binding.namespace,
    body: { metadata: { name }, spec: { hard } },
  });
}

/** Polls `room()` until it equals `expected` (the watch is asynchronous); no timing assertion. */
async function roomBecomes(quota: KubeQuota, expected: QuotaRoom): Promise<void> {
  let room: QuotaRoom = {};
  for (let i = 0; i < 500; i += 1) {
    room = await quota.room(binding);
    if (JSON.stringify(room) === JSON.stringify(expected)) return;
    await sleep(10);
  }
  expect(room).toEqual(expected);
}

beforeEach(async () => {
  api = await startFakeKubeApi();
  kc = kubeConfigFor(api.url);
  core = kc.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: binding.namespace } } });
  await addQuota('icepack', { 'requests.cpu': '8', 'requests.memory': '32Gi' });
});

afterEach(async () => {
  await Promise.all(gates.splice(0).map((quota) => quota.close()));
  await api.stop();
});

describe('KubeQuota', () => {
  it('gives hard − used of the tightest quota; no quota in the namespace is no limit', async () => {
    const quota = gate();
    expect(await quota.room(binding)).toEqual({ cpuMillicores: 8_000, memoryBytes: 32 * GiB });
    await addQuota('tighter-cpu', { 'limits.cpu': '4' });
    await roomBecomes(quota, { cpuMillicores: 4_000, memoryBytes: 32 * GiB });
    expect(await quota.room({ ...binding, namespace: 'default' })).toEqual({});
  });

  it('follows the quota as applications come and go, without listing it per call', async () => {
    const quota = gate();
    // A worker opens the gate before it takes tasks: the watch has synced by then.
    await quota.open(binding);
    expect(quota.watching(binding.namespace)).toBe(true);
    // From here on every list of the quotas hangs: the answers below come from the watch.
    const lists = api.hold((method, path) => method === 'GET' && path.endsWith('/resourcequotas'));
    const custom = kc.makeApiClient(CustomObjectsApi);
    await custom.createNamespacedCustomObject({
      ...SPARK_API,
      namespace: binding.namespace,
      body: {
        apiVersion: 'sparkoperator.k8s.io/v1beta2',
        kind: 'SparkApplication',
        metadata: { name: 'job' },
        spec: {
          type: 'Python',
          driver: { cores: 1, memory: '1g', memoryOverhead: '1g' },
          executor: { cores: 2, instances: 1, memory: '2g', memoryOverhead: '1g' },
        },
      },
    });
    await roomBecomes(quota, { cpuMillicores: 5_000, memoryBytes: 27 * GiB });
    await custom.deleteNamespacedCustomObject({
      ...SPARK_API,
      namespace: binding.namespace,
      name: 'job',
    });
    await roomBecomes(quota, { cpuMillicores: 8_000, memoryBytes: 32 * GiB });
    lists.release();
  });

  it('does not let two claims take the same room; a claim ends at release', async () => {
    const quota = gate();
    expect(await quota.acquire(binding, 'run-a', cpu(5_000))).toBe(true);
    expect(await quota.room(binding)).toEqual({ cpuMillicores: 3_000, memoryBytes: 31 * GiB });
    // Concurrent claims: only one fits in what is left.
    const both = await Promise.all([
      quota.acquire(binding, 'run-b', cpu(3_000)),
      quota.acquire(binding, 'run-c', cpu(3_000)),
    ]);
    expect(both.filter(Boolean)).toHaveLength(1);
    // Claiming again under the same run id does not count the run twice.
    expect(await quota.acquire(binding, 'run-a', cpu(5_000))).toBe(true);
    await quota.release(binding, 'run-a');
    expect(await quota.acquire(binding, 'run-d', cpu(5_000))).toBe(true);
  });

  it('lets a claim lapse after settleMs: by then the run counts in the quota itself', async () => {
    const quota = gate(0);
    expect(await quota.acquire(binding, 'run-a', cpu(5_000))).toBe(true);
    await sleep(5);
    expect(await quota.acquire(binding, 'run-b', cpu(5_000))).toBe(true);
  });
});

describe('useOf (the group use the console shows)', () => {
  it("is the tightest quota's used and hard, plus claims not yet in it", () => {
    const quotas: V1ResourceQuota[] = [
      {
        spec: { hard: { 'requests.cpu': '8', 'requests.memory': '32Gi' } },
        status: {
          hard: { 'requests.cpu': '8', 'requests.memory': '32Gi' },
          used: { 'requests.cpu': '3500m', 'requests.memory': '8Gi' },
        },
      },
      // A second quota with less cpu room left: the one runs are sized against.
      { status: { hard: { 'limits.cpu': '4' }, used: { 'limits.cpu': '3' } } },
    ];
    expect(useOf(quotas, { cpuMillicores: 500, memoryBytes: GiB })).toEqual({
      source: 'resource-quota',
      cpu: { usedMillicores: 3_500, hardMillicores: 4_000 },
      memory: { usedBytes: 9 * GiB, hardBytes: 32 * GiB },
    });
  });

  it('has no hard figure where no quota sets one', () => {
    expect(useOf([], { cpuMillicores: 0, memoryBytes: 0 })).toEqual({
      source: 'resource-quota',
      cpu: { usedMillicores: 0 },
      memory: { usedBytes: 0 },
    });
  });
});
