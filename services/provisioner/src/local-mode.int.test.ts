import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ServiceProcess } from '@icepack/runtime/testing';
import { tempDir } from '@icepack/test';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { LocalCluster } from './adapters/local-cluster.ts';
import type { CatalogView } from './domain/catalog-record.ts';
import type { GroupView } from './domain/group-record.ts';
import { readBindings } from './testing/binding-reader.ts';
import { startTestProvisioner, TEST_TOKEN } from './testing/test-provisioner.ts';
import type { ApiError } from './testing/test-provisioner.ts';
import { until } from './testing/until.ts';

const infra = inject('infra');
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('provisioner: local mode (no Kubernetes)', () => {
  it('treats a group as a budget of this machine: same API, runner local, 422 beyond the machine', async () => {
    const suffix = randomUUID().slice(0, 8);
    const p = await startTestProvisioner({
      infra,
      cluster: new LocalCluster({ allocatable: { cpuMillis: 4000, memoryBytes: 16 * 2 ** 30 } }),
    });
    cleanups.push(() => p.stop());
    const reader = await readBindings(infra.kafkaBrokers, new Set([`a-${suffix}`, `b-${suffix}`]));
    cleanups.push(() => reader.stop());
    for (const name of [`a-${suffix}`, `b-${suffix}`])
      await p.api('POST', '/v1/catalogs', { name, type: 'rest', uri: infra.catalogUri });

    const created = await p.api<GroupView>('POST', '/v1/resource-groups', {
      name: `a-${suffix}`,
      catalog: `a-${suffix}`,
      cpu: '3',
      memory: '8Gi',
      slots: 2,
      smallSlots: 2,
      spark: { executorMemory: '2g' },
    });
    expect(created.status).toBe(201);
    expect(created.body.status.mode).toBe('local');
    expect(Object.fromEntries(created.body.status.steps.map((s) => [s.name, s.state]))).toEqual({
      persisted: 'done',
      namespace: 'skipped',
      resourceQuota: 'skipped',
      limitRange: 'skipped',
      configMap: 'skipped',
      serviceAccount: 'skipped',
      role: 'skipped',
      roleBinding: 'skipped',
      ready: 'done',
      bindingPublished: 'done',
    });
    const binding = await until('the binding', () =>
      reader.events.find((e) => e.key === `a-${suffix}`),
    );
    expect(binding.binding).toMatchObject({
      runner: 'local',
      state: 'ready',
      slots: 2,
      smallSlots: 2,
      cpu: '3',
      memory: '8Gi',
    });

    // The small-task lane's size is validated like `slots`: a 4xx naming the field.
    const badLane = await p.api<ApiError>('POST', '/v1/resource-groups', {
      name: `b-${suffix}`,
      catalog: `b-${suffix}`,
      cpu: '2',
      memory: '4Gi',
      slots: 1,
      smallSlots: -1,
      spark: { driverMemory: '1g', executorMemory: '1g', executorCores: 1 },
    });
    expect(badLane.status).toBe(400);
    expect(badLane.body.fields?.map((f) => f.path)).toEqual(['smallSlots']);

    const tooBig = await p.api<ApiError>('POST', '/v1/resource-groups', {
      name: `b-${suffix}`,
      catalog: `b-${suffix}`,
      cpu: '2',
      memory: '4Gi',
      slots: 1,
      spark: { driverMemory: '1g', executorMemory: '1g', executorCores: 1 },
    });
    expect(tooBig.status).toBe(422);
    expect(tooBig.body.message).toContain(
      'does not fit this machine: cpu 2 requested but only 1 free',
    );
    expect(tooBig.body).toMatchObject({
      free: { cpu: '1', memory: '8Gi' },
      allocatable: { cpu: '4', memory: '16Gi' },
    });

    expect((await p.api('DELETE', `/v1/resource-groups/a-${suffix}`)).status).toBe(202);
    await until(
      'the group to go',
      async () => (await p.api('GET', `/v1/resource-groups/a-${suffix}`)).status === 404,
    );
    await until('the tombstone', () => reader.events.find((e) => e.binding === undefined));
    // The budget is free again.
    expect(
      (
        await p.api('POST', '/v1/resource-groups', {
          name: `b-${suffix}`,
          catalog: `b-${suffix}`,
          cpu: '2',
          memory: '4Gi',
          slots: 1,
          spark: { driverMemory: '1g', executorMemory: '1g', executorCores: 1 },
        })
      ).status,
    ).toBe(201);
  });

  it('runs as a process in local mode and applies its bootstrap file at start-up, idempotently', async () => {
    const suffix = randomUUID().slice(0, 8);
    const dir = tempDir('icepack-bootstrap-');
    const file = join(dir, 'icepack.yaml');
    const yaml = (warehouse: string) => `
catalogs:
  - name: boot-${suffix}
    type: rest
    uri: ${infra.catalogUri}
    warehouse: ${warehouse}
    properties:
      io-impl: org.apache.iceberg.hadoop.HadoopFileIO
groups:
  - name: boot-${suffix}
    catalog: boot-${suffix}
    cpu: "2"
    memory: 8Gi
    slots: 1
    spark:
      executorCores: 1
      executorMemory: 2g
`;
    writeFileSync(file, yaml('first'));
    const env = {
      ICEPACK_KAFKA_BROKERS: infra.kafkaBrokers.join(','),
      ICEPACK_REDIS_URL: infra.redisUrl,
      ICEPACK_API_TOKEN: TEST_TOKEN,
      ICEPACK_PROVISIONER_MODE: 'local',
      ICEPACK_LOCAL_CPU: '8',
      ICEPACK_LOCAL_MEMORY: '32Gi',
      ICEPACK_BOOTSTRAP_FILE: file,
      ICEPACK_PROVISIONER_KEY_PREFIX: `icepack-test:${randomUUID()}`,
    };
    const entry = resolve(import.meta.dirname, 'main.ts');
    const get = async <T>(service: ServiceProcess, path: string) => {
      const response = await fetch(`${service.url}${path}`, {
        headers: { authorization: `Bearer ${TEST_TOKEN}` },
      });
      return { status: response.status, body: (await response.json()) as T };
    };
    const first = await ServiceProcess.start({ entry, env });
    cleanups.push(() => first.stop('SIGKILL'));
    await first.waitForReadyz((r) => r.status === 200);
    const group = await until('the bootstrap group', async () => {
      const found = await get<GroupView>(first, `/v1/resource-groups/boot-${suffix}`);
      return found.status === 200 && found.body.status.phase === 'ready' ? found.body : undefined;
    });
    expect(group).toMatchObject({
      cpu: '2',
      memory: '8Gi',
      spark: { executorCores: 1, executorMemory: '2g' },
      status: { mode: 'local' },
    });
    expect(await first.stop('SIGTERM')).toBe(0);

    // Applied again with a changed catalog: the catalog is updated, the group stays as it was.
    writeFileSync(file, yaml('second'));
    const second = await ServiceProcess.start({ entry, env });
    cleanups.push(() => second.stop('SIGKILL'));
    await second.waitForReadyz((r) => r.status === 200);
    const catalog = await until('the updated catalog', async () => {
      const found = await get<CatalogView>(second, `/v1/catalogs/boot-${suffix}`);
      return found.body.warehouse === 'second' ? found.body : undefined;
    });
    expect(catalog.status).toMatchObject({ group: `boot-${suffix}`, published: true });
    const groups = await get<GroupView[]>(second, '/v1/resource-groups');
    expect(groups.body.map((g) => [g.name, g.status.phase, g.status.createdAt])).toEqual([
      [`boot-${suffix}`, 'ready', group.status.createdAt],
    ]);
  });
});
