import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { createHttpServer, createLogger, type HttpServer } from '@icepack/runtime';
import { sampleTableId, sizingModelKey, type SizingModel } from '@icepack/types';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Planner } from './adapters/planner.ts';
import { TableStateStore } from './adapters/state-store.ts';
import { InMemoryTaskEventSink } from './adapters/task-event-sink.ts';
import { TaskQueue } from './adapters/task-queue.ts';
import { SizingModelReader } from './adapters/sizing-model-reader.ts';
import { plannerRouter } from './api/planner-router.ts';
import { tableState } from './domain/state-fixtures.ts';

const infra = inject('infra');
const logger = createLogger({
  service: 'planner-api-test',
  level: 'warn',
  destination: new Writable({ write: (_c, _e, cb) => cb() }),
});
const token = 'test-token-0123456789abcdef';
const catalog = `api-${randomUUID().slice(0, 8)}`;

let redis: Redis;
let http: HttpServer;
let queue: TaskQueue;
let states: TableStateStore;

beforeAll(async () => {
  redis = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
  queue = new TaskQueue({ connection: redis });
  states = new TableStateStore({
    connection: redis,
    statesKey: `test:${catalog}:states`,
    catalogsKey: `test:${catalog}:catalogs`,
  });
  const planner = new Planner({ queue, states, events: new InMemoryTaskEventSink(), logger });
  // Two tables: a merge (80 small files) and a cleanup (60 snapshots).
  const table = (name: string) => sampleTableId({ catalog, name });
  await planner.handleState(
    tableState({ smallFiles: 80, newDataFiles: 5 }, { table: table('hot') }),
  );
  await planner.handleState(tableState({ snapshots: 60 }, { table: table('old') }));
  http = createHttpServer({ port: 0, host: '127.0.0.1', logger });
  const sizing = new SizingModelReader({ connection: redis, logger });
  http.app.use(
    '/v1',
    plannerRouter({ planner, queue, token, catalogs: () => states.catalogs(), sizing }),
  );
  await http.listen();
});

afterAll(async () => {
  await http.close();
  await queue.queue(catalog).obliterate({ force: true });
  await queue.close();
  await states.clear();
  await redis.del(sizingModelKey(catalog));
  await redis.quit();
});

async function get(path: string, auth = token) {
  const res = await fetch(`http://127.0.0.1:${http.port}${path}`, {
    headers: { authorization: `Bearer ${auth}` },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('planner API', () => {
  it('requires the bearer token', async () => {
    expect((await get(`/v1/catalogs/${catalog}/queue`, 'wrong-token')).status).toBe(401);
    expect(
      (await get(`/v1/tables/${encodeURIComponent(`${catalog}/sales/hot`)}/plan`, 'nope')).status,
    ).toBe(401);
  });

  it('GET /v1/tables/{table}/plan says what it would do and which factor and threshold fired', async () => {
    const { status, body } = await get(
      `/v1/tables/${encodeURIComponent(`${catalog}/sales/hot`)}/plan`,
    );
    expect(status).toBe(200);
    expect(body).toMatchObject({
      tableKey: `${catalog}/sales/hot`,
      paused: false,
      state: { lastSequenceNumber: '42' },
    });
    const decisions = body.decisions as {
      type: string;
      action: string;
      fired: string[];
      factors: unknown[];
    }[];
    const merge = decisions.find((d) => d.type === 'merge');
    expect(merge).toMatchObject({ action: 'update', pending: 'prioritized' });
    expect(merge?.factors).toContainEqual({
      factor: 'small-files',
      value: 80,
      threshold: 20,
      met: true,
      text: '80 small files > 20',
    });
    expect(decisions.find((d) => d.type === 'cleanup')).toMatchObject({
      action: 'none',
      notFired: [
        '1 snapshots ≤ 50 (not above)',
        // One snapshot is the last one, which an expiry keeps (retainLast 1).
        'no snapshot an expiry would remove: each is inside the 5d retention, among the last 1, or kept by a branch or tag',
      ],
    });
  });

  it('404 for a table the planner has not seen, 400 for a malformed key', async () => {
    const unknown = await get(`/v1/tables/${encodeURIComponent(`${catalog}/sales/nope`)}/plan`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toContain(`${catalog}/sales/nope`);
    expect((await get(`/v1/tables/${encodeURIComponent('not-a-key')}/plan`)).status).toBe(400);
  });

  it('GET /v1/catalogs/{catalog}/queue lists waiting tasks in run order with their scores', async () => {
    const { status, body } = await get(`/v1/catalogs/${catalog}/queue`);
    expect(status).toBe(200);
    const tasks = body.tasks as {
      position: number;
      id: string;
      priority: number;
      score: { total: number; parts: { factor: string }[] };
    }[];
    expect(tasks.map((t) => [t.position, t.id])).toEqual([
      [1, `merge/${catalog}/sales/hot`],
      [2, `cleanup/${catalog}/sales/old`],
    ]);
    expect(tasks[0]!.priority).toBeLessThan(tasks[1]!.priority);
    expect(tasks[0]?.score.parts.map((p) => p.factor)).toEqual([
      'base',
      'delete-files',
      'small-files',
      'waiting',
    ]);
    expect((await get(`/v1/catalogs/${catalog}/queue?limit=1`)).body.tasks).toHaveLength(1);
    expect((await get(`/v1/catalogs/${catalog}/queue?limit=0`)).status).toBe(400);
  });

  it('answers 404 for a catalog it has not seen, without opening a queue for it', async () => {
    const before = queue.cachedQueues;
    for (let i = 0; i < 20; i += 1) {
      const unknown = await get(`/v1/catalogs/unknown-${String(i)}-${catalog}/queue`);
      expect(unknown.status).toBe(404);
      expect(unknown.body.message).toContain(`unknown-${String(i)}-${catalog}`);
    }
    expect(queue.cachedQueues).toBe(before);
  });

  it('GET /v1/catalogs/{catalog}/sizing shows the sizing model the dispatcher published', async () => {
    // Before any dispatcher fitted one: 404, naming the catalog.
    const none = await get(`/v1/catalogs/${catalog}/sizing`);
    expect(none.status).toBe(404);
    expect(none.body.message).toContain(`sizing model for catalog ${catalog}`);

    const prior = (2 * 2 ** 30) / 600;
    const model: SizingModel = {
      catalog,
      learned: true,
      samples: { total: 42, used: 30, oom: 1, timeout: 0 },
      bytesPerCoreSecond: { prior, fitted: prior * 1.5, min: prior / 4, max: prior * 4 },
      bytesPerCore: Math.round(prior * 1.5 * 600),
      heapPerCore: {
        prior: 2 ** 31,
        fitted: 1.5 * 2 ** 30,
        min: 2 ** 29,
        max: 2 ** 33,
        samples: 30,
      },
      targetRunSeconds: 600,
      at: '2026-12-02T14:00:00.000Z',
    };
    // As the dispatcher writes it (its LearnedSizingStore), under the shared key.
    await redis.set(sizingModelKey(catalog), JSON.stringify(model), 'PX', 60_000);
    const shown = await get(`/v1/catalogs/${catalog}/sizing`);
    expect(shown.status).toBe(200);
    expect(shown.body).toEqual(model);
    expect((await get(`/v1/catalogs/${catalog}/sizing`, 'wrong-token')).status).toBe(401);

    // A value that is not a model (or another catalog's) is not shown.
    await redis.set(sizingModelKey(catalog), JSON.stringify({ ...model, catalog: 'other' }));
    expect((await get(`/v1/catalogs/${catalog}/sizing`)).status).toBe(404);
    await redis.set(sizingModelKey(catalog), '{"bytesPerCore": "a lot"}');
    expect((await get(`/v1/catalogs/${catalog}/sizing`)).status).toBe(404);

    const unknown = await get(`/v1/catalogs/unknown-${catalog}/sizing`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toContain(`the planner has seen no table of catalog unknown-`);
  });

  it('keeps at most maxCachedQueues queue objects, dropping the least recently used', () => {
    const small = new TaskQueue({ connection: redis, maxCachedQueues: 3 });
    const first = small.queue(`${catalog}-a`);
    for (const name of ['b', 'c']) small.queue(`${catalog}-${name}`);
    expect(small.queue(`${catalog}-a`)).toBe(first); // a hit: `a` is now the most recent
    for (const name of ['d', 'e', 'f', 'g']) small.queue(`${catalog}-${name}`);
    expect(small.cachedQueues).toBe(3);
    expect(small.queue(`${catalog}-a`)).not.toBe(first); // dropped, reopened on use
  });
});
