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

describe('provisioner API: group Spark settings (issue 16, finding 4)', () => {
  it('refuses hostPath volumes, unlisted sparkConf keys and foreign images with 400 naming the field; no group, no binding', async () => {
    const p = await startTestProvisioner({
      infra,
      cluster: new LocalCluster({ allocatable: { cpuMillis: 4000, memoryBytes: 16 * 2 ** 30 } }),
    });
    cleanups.push(() => p.stop());
    const suffix = randomUUID().slice(0, 8);
    const catalog = `spark-conf-${suffix}`;
    const created = await p.api('POST', '/v1/catalogs', {
      name: catalog,
      type: 'rest',
      uri: infra.catalogUri,
    });
    expect(created.status).toBe(201);
    const group = (name: string, spark: object) => ({
      name,
      catalog,
      cpu: '2',
      memory: '4Gi',
      slots: 1,
      spark: { driverMemory: '1g', executorCores: 1, executorMemory: '1g', ...spark },
    });
    const hostPath = 'spark.kubernetes.driver.volumes.hostPath.root.mount.path';
    for (const [name, spark, field] of [
      [`hp-${suffix}`, { sparkConf: { [hostPath]: '/host' } }, `spark.sparkConf["${hostPath}"]`],
      [
        `jvm-${suffix}`,
        { sparkConf: { 'spark.driver.extraJavaOptions': '-javaagent:/x.jar' } },
        'spark.sparkConf["spark.driver.extraJavaOptions"]',
      ],
      [`img-${suffix}`, { image: 'evil.example/spark:latest' }, 'spark.image'],
    ] as const) {
      const response = await p.api('POST', '/v1/resource-groups', group(name, spark));
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect((response.body.fields ?? []).map((f) => f.path)).toEqual([field]);
      expect((await p.api('GET', `/v1/resource-groups/${name}`)).status).toBe(404);
    }
    // Allowed tuning from the project's registry is accepted.
    const ok = await p.api(
      'POST',
      '/v1/resource-groups',
      group(`ok-${suffix}`, {
        image: 'ghcr.io/icepack/spark-job:test',
        sparkConf: { 'spark.sql.shuffle.partitions': '8' },
      }),
    );
    expect([201, 202], JSON.stringify(ok.body)).toContain(ok.status);
    cleanups.push(() => p.api('DELETE', `/v1/resource-groups/ok-${suffix}`));
  });
});

describe('provisioner API: a catalog’s maintenance policy (issue 17)', () => {
  it('refuses an unknown key or an unreadable value with 400 naming the field; keeps a good policy in the definition', async () => {
    const p = await startTestProvisioner({
      infra,
      cluster: new LocalCluster({ allocatable: { cpuMillis: 4000, memoryBytes: 16 * 2 ** 30 } }),
    });
    cleanups.push(() => p.stop());
    const name = `policy-${randomUUID().slice(0, 8)}`;
    const catalog = (policy: object) => ({ name, type: 'rest', uri: infra.catalogUri, policy });
    const bad = await p.api(
      'POST',
      '/v1/catalogs',
      catalog({
        settings: { 'icepack.snapshot-threshold': 'lots' },
        namespaces: { 'sales.eu': { 'icepack.small-files-threshold': '5' } },
      }),
    );
    expect(bad.status, JSON.stringify(bad.body)).toBe(400);
    expect((bad.body.fields ?? []).map((f) => f.path)).toEqual([
      'policy.settings["icepack.snapshot-threshold"]',
      'policy.namespaces["sales.eu"]["icepack.small-files-threshold"]',
    ]);
    expect((await p.api('GET', `/v1/catalogs/${name}`)).status).toBe(404);

    const policy = {
      settings: { 'icepack.small-file-threshold': '40' },
      namespaces: { 'sales.eu': { 'icepack.target-file-size-bytes': String(128 * 2 ** 20) } },
    };
    const created = await p.api('POST', '/v1/catalogs', catalog(policy));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    cleanups.push(() => p.api('DELETE', `/v1/catalogs/${name}`));
    expect((await p.api('GET', `/v1/catalogs/${name}`)).body).toMatchObject({ policy });
  });
});

describe('provisioner API: what spark-defaults.conf cannot carry', () => {
  it('refuses a line break in a catalog field, property or sparkConf entry with 400 naming the field; nothing stored', async () => {
    const p = await startTestProvisioner({
      infra,
      cluster: new LocalCluster({ allocatable: { cpuMillis: 4000, memoryBytes: 16 * 2 ** 30 } }),
    });
    cleanups.push(() => p.stop());
    const name = `conf-${randomUUID().slice(0, 8)}`;
    // A value `…\nspark.driver.extraJavaOptions …` would add a line of its own to the file.
    const injected = '\nspark.driver.extraJavaOptions -javaagent:/x.jar';
    const bad = await p.api('POST', '/v1/catalogs', {
      name,
      type: 'rest',
      uri: infra.catalogUri,
      warehouse: `s3://lake${injected}`,
      properties: { 's3.endpoint': `http://s3${injected}`, 'a\rb': 'c' },
    });
    expect(bad.status, JSON.stringify(bad.body)).toBe(400);
    expect((bad.body.fields ?? []).map((f) => f.path)).toEqual([
      'warehouse',
      'properties["s3.endpoint"]',
      'properties["a\\rb"]',
    ]);
    expect(JSON.stringify(bad.body)).not.toContain('extraJavaOptions');
    expect((await p.api('GET', `/v1/catalogs/${name}`)).status).toBe(404);

    const good = { name, type: 'rest', uri: infra.catalogUri };
    expect((await p.api('POST', '/v1/catalogs', good)).status).toBe(201);
    cleanups.push(() => p.api('DELETE', `/v1/catalogs/${name}`));
    const scope = await p.api('PUT', `/v1/catalogs/${name}`, {
      ...good,
      auth: {
        type: 'oauth2',
        clientSecret: { secret: { name: 'catalog', key: 'secret' } },
        scope: `catalog\r${injected}`,
      },
    });
    expect(scope.status, JSON.stringify(scope.body)).toBe(400);
    expect((scope.body.fields ?? []).map((f) => f.path)).toEqual(['auth.scope']);
    expect((await p.api('GET', `/v1/catalogs/${name}`)).body).toMatchObject({
      auth: { type: 'none' },
    });

    const group = await p.api('POST', '/v1/resource-groups', {
      name,
      catalog: name,
      cpu: '2',
      memory: '4Gi',
      slots: 1,
      spark: {
        driverMemory: '1g',
        executorCores: 1,
        executorMemory: '1g',
        sparkConf: { 'spark.sql.shuffle.partitions': `8${injected}` },
      },
    });
    expect(group.status, JSON.stringify(group.body)).toBe(400);
    expect((group.body.fields ?? []).map((f) => f.path)).toEqual([
      'spark.sparkConf["spark.sql.shuffle.partitions"]',
    ]);
    expect((await p.api('GET', `/v1/resource-groups/${name}`)).status).toBe(404);
  });
});
