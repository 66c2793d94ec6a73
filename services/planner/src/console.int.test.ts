/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-argument,
   @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-explicit-any --
   response bodies are untyped JSON; the assertions are the contract. */
import { randomUUID } from 'node:crypto';
import { sampleTableId, tableKey, type TaskEvent } from '@icepack/types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { taskOutcomeHandlers } from './adapters/task-outcome-handlers.ts';
import { withRecentFailures } from './console/recent-failures.ts';
import { tableState } from './domain/state-fixtures.ts';
import { startConsoleStack, type ConsoleStack } from './testing/console-stack.ts';

// Contract of the console's JSON API (ADR 0020) on real Redis and real BullMQ queues.
const infra = inject('infra');
const catalog = `console-${randomUUID().slice(0, 8)}`;
const other = `${catalog}-b`;
const hot = sampleTableId({ catalog, name: 'hot' });
const old = sampleTableId({ catalog, name: 'old' });
const calm = sampleTableId({ catalog: other, name: 'calm' });
let stack: ConsoleStack;

beforeAll(async () => {
  stack = await startConsoleStack(infra.redisUrl, { trustedUserHeader: 'X-Forwarded-User' });
  await stack.planner.handleState(tableState({ smallFiles: 80, newDataFiles: 5 }, { table: hot }));
  await stack.planner.handleState(tableState({ snapshots: 60 }, { table: old }));
  await stack.planner.handleState(tableState({ smallFiles: 3 }, { table: calm }));
});

afterAll(async () => {
  await stack.close([catalog, other]);
});

async function call(
  path: string,
  init: { method?: string; headers?: Record<string, string> } = {},
) {
  const res = await fetch(`${stack.url}/console/api${path}`, {
    method: init.method ?? 'GET',
    headers: init.headers ?? { authorization: `Bearer ${stack.token}` },
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}
const enc = (id: typeof hot) => encodeURIComponent(tableKey(id));

describe('console API', () => {
  it('refuses a missing or wrong token, and a proxy header only counts when configured', async () => {
    expect((await call('/overview', { headers: {} })).status).toBe(401);
    expect((await call('/overview', { headers: { authorization: 'Bearer nope' } })).status).toBe(
      401,
    );
    expect((await call('/me')).body).toEqual({ user: 'token' });
    const proxied = await call('/me', { headers: { 'x-forwarded-user': 'alice@example.com' } });
    expect(proxied).toEqual({ status: 200, body: { user: 'proxy:alice@example.com' } });
    expect((await call('/me', { headers: { 'x-forwarded-user': ' ' } })).status).toBe(401);
  });

  it('serves the page and its bundled script without a CDN', async () => {
    const page = await (await fetch(`${stack.url}/console/`)).text();
    expect(page).toContain('<script type="module" src="/console/app.js">');
    expect(page).not.toMatch(/https?:\/\//);
    const js = await fetch(`${stack.url}/console/app.js`);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect((await js.text()).length).toBeGreaterThan(10_000);
  });

  it('GET /overview pages, sorts and filters on the server', async () => {
    const { status, body } = await call(
      `/overview?q=${catalog}&sort=smallFiles&dir=desc&pageSize=1`,
    );
    expect(status).toBe(200);
    expect(body).toMatchObject({ total: 3, pages: 3, page: 1 });
    expect(body.rows.map((r: { tableKey: string }) => r.tableKey)).toEqual([tableKey(hot)]);
    const second = await call(`/overview?q=${catalog}&sort=smallFiles&dir=desc&pageSize=1&page=2`);
    expect(second.body.rows[0]).toMatchObject({
      tableKey: tableKey(calm),
      smallFiles: 3,
      paused: null,
    });
    const byCatalog = await call(`/overview?catalog=${other}`);
    expect(byCatalog.body.total).toBe(1);
    const mine = byCatalog.body.catalogs.find((c: { name: string }) => c.name === catalog);
    expect(mine).toMatchObject({ tables: 2, waiting: 2, running: 0, paused: null });
  });

  it('GET /overview names the bad field', async () => {
    const { status, body } = await call('/overview?sort=size');
    expect(status).toBe(400);
    expect(body.fields).toEqual([expect.objectContaining({ path: 'sort' })]);
  });

  it('GET /tables/{table} has health, partitions, explanation and ledger; 404 and 400', async () => {
    const { status, body } = await call(`/tables/${enc(hot)}`);
    expect(status).toBe(200);
    expect(body.summary).toMatchObject({ tableKey: tableKey(hot), smallFiles: 80 });
    expect(
      body.explanation.decisions.find((d: { type: string }) => d.type === 'merge'),
    ).toMatchObject({
      pending: 'prioritized',
      fired: expect.arrayContaining(['80 small files > 20']),
    });
    expect(body).toMatchObject({ consolePause: null, catalogPause: null, ledger: { entries: [] } });
    expect((await call(`/tables/${encodeURIComponent(`${catalog}/nope/none`)}`)).status).toBe(404);
    expect((await call('/tables/not-a-key')).status).toBe(400);
  });

  it('GET /catalogs/{catalog}/queue lists waiting in run order, running and recent failures', async () => {
    const handlers = withRecentFailures(
      taskOutcomeHandlers({ record: () => Promise.resolve(false) }),
      stack.store,
    );
    const failed: TaskEvent = {
      taskId: `cleanup/${tableKey(old)}`,
      table: old,
      taskType: 'cleanup',
      status: 'failed',
      at: '2026-12-01T10:00:00.000Z',
      error: { kind: 'oom', message: 'executor lost', retryable: false },
    };
    await (handlers.TaskFailed as any)({ payload: failed }, { logger: undefined });
    const { status, body } = await call(`/catalogs/${catalog}/queue`);
    expect(status).toBe(200);
    expect(
      body.waiting.map((w: { type: string; position: number }) => [w.position, w.type]),
    ).toEqual([
      [1, 'merge'],
      [2, 'cleanup'],
    ]);
    expect(body.waiting[0].score.total).toBeGreaterThan(body.waiting[1].score.total);
    expect(body.waiting[0].waitingMs).toBeGreaterThanOrEqual(0);
    expect(body.running).toEqual([]);
    expect(body.failures).toEqual([
      expect.objectContaining({ tableKey: tableKey(old), reason: 'oom: executor lost' }),
    ]);
    expect((await call(`/catalogs/${catalog}-none/queue`)).status).toBe(404);
  });

  it('pausing a table stops its planning until it is resumed, and each action is audited', async () => {
    const paused = await call(`/tables/${enc(hot)}/pause`, {
      method: 'POST',
      headers: { 'x-forwarded-user': 'bob' },
    });
    expect(paused.body).toMatchObject({ changed: true, outcome: 'paused', by: 'proxy:bob' });
    // A newer state that would create tasks: the paused table gets none, its merge goes.
    const newer = tableState(
      { smallFiles: 90, newDataFiles: 6, snapshots: 70 },
      { table: hot, lastSequenceNumber: '43' },
    );
    await stack.planner.handleState(newer);
    const jobs = await stack.queue.inspect(hot);
    expect([jobs.merge.state, jobs.cleanup.state]).toEqual(['missing', 'missing']);
    const page = await call(`/tables/${enc(hot)}`);
    expect(page.body.consolePause).toMatchObject({ by: 'proxy:bob' });
    expect(page.body.explanation.paused).toBe(true);

    await call(`/tables/${enc(hot)}/resume`, { method: 'POST' });
    await stack.planner.handleState({ ...newer, lastSequenceNumber: '44' });
    expect((await stack.queue.inspect(hot)).merge.state).toBe('prioritized');

    const audit = await call('/audit?limit=2');
    expect(audit.body.entries).toEqual([
      expect.objectContaining({
        action: 'resume table',
        target: tableKey(hot),
        user: 'token',
        outcome: 'resumed',
      }),
      expect.objectContaining({
        action: 'pause table',
        target: tableKey(hot),
        user: 'proxy:bob',
        outcome: 'paused',
      }),
    ]);
  });

  it('pausing a catalog pauses its tables; cancelling removes a waiting task with an event', async () => {
    expect((await call(`/catalogs/${other}/pause`, { method: 'POST' })).body.changed).toBe(true);
    await stack.planner.handleState(
      tableState({ smallFiles: 50, newDataFiles: 2 }, { table: calm, lastSequenceNumber: '43' }),
    );
    expect((await stack.queue.inspect(calm)).merge.state).toBe('missing');
    expect((await call(`/overview?catalog=${other}`)).body.rows[0].paused).not.toBeNull();
    await call(`/catalogs/${other}/resume`, { method: 'POST' });

    const cancel = await call(`/tables/${enc(old)}/tasks/cleanup/cancel`, { method: 'POST' });
    expect(cancel.body).toMatchObject({ changed: true, outcome: 'cancelled' });
    expect((await stack.queue.inspect(old)).cleanup.state).toBe('missing');
    expect(stack.events.events.at(-1)).toMatchObject({ status: 'cancelled', taskType: 'cleanup' });
    expect((await call(`/tables/${enc(old)}/tasks/vacuum/cancel`, { method: 'POST' })).status).toBe(
      400,
    );
  });
});
