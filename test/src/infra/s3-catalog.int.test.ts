// deploy/local/s3-catalog.sh after its S3 store restarted: moto keeps objects in memory, the
// catalog its tables in SQLite. Before, a catalog started on a store that came back empty still
// listed tables whose metadata was gone — creating them again failed (409) and loading them
// failed, and an orphans run, which loads every table of the catalog, failed on them.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './free-port.ts';
import { runLocalScriptOrThrow } from './local-script.ts';

let env: NodeJS.ProcessEnv;
let catalog: string;

const script = (name: string, command: string) => runLocalScriptOrThrow(name, [command], env);

async function call(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${catalog}/v1${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function createTable(): Promise<number> {
  const ns = await call('POST', '/namespaces', { namespace: ['lake'] });
  if (ns.status !== 200 && ns.status !== 409) throw new Error(`namespace: ${String(ns.status)}`);
  const table = await call('POST', '/namespaces/lake/tables', {
    name: 'events',
    schema: { type: 'struct', fields: [{ id: 1, name: 'id', required: false, type: 'long' }] },
  });
  return table.status;
}

beforeAll(async () => {
  const [s3Port, catalogPort] = [await freePort(), await freePort()];
  env = {
    ICEPACK_RUN: await mkdtemp(join(tmpdir(), 'icepack-s3-catalog-')),
    ICEPACK_S3_PORT: String(s3Port),
    ICEPACK_S3_CATALOG_PORT: String(catalogPort),
  };
  catalog = `http://127.0.0.1:${String(catalogPort)}`;
  await script('s3-catalog.sh', 'up');
}, 300_000);

afterAll(async () => {
  try {
    await script('s3-catalog.sh', 'stop');
  } finally {
    await script('s3.sh', 'stop');
    await rm(env.ICEPACK_RUN!, { recursive: true, force: true });
  }
}, 120_000);

describe('the local S3 catalog across restarts', () => {
  it('keeps its tables while its store keeps their files, and starts empty once the store lost them', async () => {
    expect(await createTable()).toBe(200);

    // The catalog restarts, the store does not: the table and its metadata are still there.
    await script('s3-catalog.sh', 'stop');
    await script('s3-catalog.sh', 'up');
    expect((await call('GET', '/namespaces/lake/tables/events')).status).toBe(200);

    // Both restart: moto comes back empty, so the catalog no longer names the lost table and
    // the same table can be created again.
    await script('s3-catalog.sh', 'stop');
    await script('s3.sh', 'stop');
    await script('s3-catalog.sh', 'up');
    expect((await call('GET', '/namespaces/lake/tables/events')).status).toBe(404);
    expect(await createTable()).toBe(200);
    expect((await call('GET', '/namespaces/lake/tables/events')).status).toBe(200);
  }, 600_000);
});
