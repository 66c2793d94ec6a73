/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-argument,
   @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-explicit-any --
   response bodies are untyped JSON; the assertions are the contract. */
import { randomUUID } from 'node:crypto';
import {
  BULLMQ_PREFIX,
  JOB_RUN_LOCATION_FIELD,
  parseMessage,
  queueNameForCatalog,
  quotaUseKey,
  sampleTableId,
  tableKey,
  type RunLocation,
  type TaskEvent,
} from '@icepack/types';
import { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { taskOutcomeHandlers } from './adapters/task-outcome-handlers.ts';
import { withRecentFailures } from './console/recent-failures.ts';
import { DEFAULT_SCORE_OPTIONS } from './domain/score.ts';
import { tableState } from './domain/state-fixtures.ts';
import { startConsoleStack, type ConsoleStack } from './testing/console-stack.ts';
import { waitFor } from './testing/wait-for.ts';

// Contract of the console's JSON API (ADR 0020) on real Redis and real BullMQ queues.
const infra = inject('infra');
const catalog = `console-${randomUUID().slice(0, 8)}`;
const other = `${catalog}-b`;
const hot = sampleTableId({ catalog, name: 'hot' });
const old = sampleTableId({ catalog, name: 'old' });
const calm = sampleTableId({ catalog: other, name: 'calm' });
// Pause and resume act at once (ADR 0024): tables of their own, in a third catalog.
const third = `${catalog}-c`;
const busy = sampleTableId({ catalog: third, name: 'busy' });
const crowded = sampleTableId({ catalog: third, name: 'crowded' });
let stack: ConsoleStack;

beforeAll(async () => {
  stack = await startConsoleStack(infra.redisUrl, {
    trustedUserHeader: 'X-Forwarded-User',
    kafkaBrokers: infra.kafkaBrokers,
  });
  await stack.planner.handleState(tableState({ smallFiles: 80, newDataFiles: 5 }, { table: hot }));
  await stack.planner.handleState(tableState({ snapshots: 60 }, { table: old }));
  await stack.planner.handleState(tableState({ smallFiles: 3 }, { table: calm }));
});

afterAll(async () => {
  await stack.close([catalog, other, third]);
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

  it("GET /overview shows each catalog's resource group use as its dispatcher publishes it", async () => {
    const use = {
      group: `icepack-${catalog}`,
      source: 'resource-quota',
      cpu: { usedMillicores: 3_000, hardMillicores: 8_000 },
      memory: { usedBytes: 6 * 2 ** 30, hardBytes: 32 * 2 ** 30 },
      at: new Date().toISOString(),
    };
    await stack.redis.set(quotaUseKey(catalog), JSON.stringify(use), 'PX', 60_000);
    // Whoever can write Redis cannot make the overview show something that is no quota use.
    await stack.redis.set(quotaUseKey(other), '{"group":"<img src=x>","cpu":"lots"}', 'PX', 60_000);
    try {
      const { body } = await call('/overview');
      const byName = new Map(body.catalogs.map((c: { name: string }) => [c.name, c]));
      expect((byName.get(catalog) as any).quota).toEqual(use);
      expect((byName.get(other) as any).quota).toBeNull();
    } finally {
      await stack.redis.del(quotaUseKey(catalog), quotaUseKey(other));
    }
  });

  it("GET /overview shows when each type last succeeded, from the planner's record", async () => {
    // Stored states carry no `lastMaintenance`: the planner records successes apart.
    await stack.lastSucceeded.record(hot, 'merge', '2026-12-01T10:00:00.000Z');
    await stack.lastSucceeded.record(hot, 'cleanup', '2026-12-01T09:00:00.000Z');
    const { body } = await call(`/overview?q=${catalog}&sort=lastMaintenance&dir=desc`);
    expect(body.rows[0]).toMatchObject({
      tableKey: tableKey(hot),
      lastMaintenance: { merge: '2026-12-01T10:00:00.000Z', cleanup: '2026-12-01T09:00:00.000Z' },
    });
    expect(body.rows[1].lastMaintenance).toEqual({});
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
      taskOutcomeHandlers({
        record: () => Promise.resolve(false),
        recordFailure: () => Promise.resolve(0),
      }),
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
    // The outcomes handler records the failure (the back-off) and logs it at debug.
    await (handlers.TaskFailed as any)({ payload: failed }, { logger: { debug: () => undefined } });
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
    expect(paused.body).toMatchObject({
      changed: true,
      outcome: 'paused; 1 waiting task removed',
      by: 'proxy:bob',
    });
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

    // The resume re-plans from the stored state (ADR 0024): no new state is needed.
    await call(`/tables/${enc(hot)}/resume`, { method: 'POST' });
    expect((await stack.queue.inspect(hot)).merge.state).toBe('prioritized');
    await stack.planner.handleState({ ...newer, lastSequenceNumber: '44' });
    expect((await stack.queue.inspect(hot)).merge.state).toBe('prioritized');

    const audit = await call('/audit?limit=2');
    expect(audit.body.entries).toEqual([
      expect.objectContaining({
        action: 'resume table',
        target: tableKey(hot),
        user: 'token',
        outcome: 'resumed; 2 waiting tasks planned',
      }),
      expect.objectContaining({
        action: 'pause table',
        target: tableKey(hot),
        user: 'proxy:bob',
        outcome: 'paused; 1 waiting task removed',
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

/** The task events the stack published on its Kafka topic, read back from the start. */
async function kafkaEvents(until: (events: TaskEvent[]) => boolean): Promise<TaskEvent[]> {
  const kafka = stack.kafka!;
  const events: TaskEvent[] = [];
  const reader = kafka.client.kafka.consumer({ groupId: `${kafka.topic}-reader-${randomUUID()}` });
  await reader.connect();
  try {
    await reader.subscribe({ topic: kafka.topic, fromBeginning: true });
    await reader.run({
      eachMessage: ({ message }) => {
        events.push(parseMessage(message.value ?? '').payload as TaskEvent);
        return Promise.resolve();
      },
    });
    await waitFor('the task events on Kafka', () => Promise.resolve(until(events) || undefined));
  } finally {
    await reader.disconnect();
  }
  return events;
}

describe('console pause and resume act at once (ADR 0024)', () => {
  it('pausing a table removes its waiting tasks without a new state; resuming re-plans them', async () => {
    await stack.planner.handleState(
      tableState({ smallFiles: 80, newDataFiles: 5, snapshots: 60 }, { table: busy }),
    );
    expect((await stack.queue.waiting(third)).length).toBe(2);

    const paused = await call(`/tables/${enc(busy)}/pause`, { method: 'POST' });
    // No new table state arrived: the pause itself removed them.
    const jobs = await stack.queue.inspect(busy);
    expect([jobs.merge.state, jobs.cleanup.state]).toEqual(['missing', 'missing']);
    expect(paused.body).toMatchObject({
      changed: true,
      outcome: 'paused; 2 waiting tasks removed',
    });
    const page = await call(`/tables/${enc(busy)}`);
    expect(page.body.explanation).toMatchObject({ paused: true, pausedBy: 'console' });
    // The re-plan pass creates nothing for a paused table.
    expect((await stack.planner.replan((await stack.states.get(tableKey(busy)))!)).actions).toEqual(
      [],
    );

    const resumed = await call(`/tables/${enc(busy)}/resume`, { method: 'POST' });
    const back = await stack.queue.inspect(busy);
    expect([back.merge.state, back.cleanup.state]).toEqual(['prioritized', 'prioritized']);
    expect(resumed.body).toMatchObject({
      changed: true,
      outcome: 'resumed; 2 waiting tasks planned',
    });
    expect((await call(`/tables/${enc(busy)}`)).body.explanation.pausedBy).toBeNull();

    // What the planner told the rest of the system, as it reached Kafka.
    const mine = (e: TaskEvent) => e.table.name === busy.name && e.table.catalog === third;
    const events = (await kafkaEvents((all) => all.filter(mine).length >= 6)).filter(mine);
    expect(events.map((e) => [e.taskType, e.status, e.reason])).toEqual([
      ['cleanup', 'planned', expect.any(String)],
      ['merge', 'planned', expect.any(String)],
      ['cleanup', 'skipped', 'paused from the console; no new tasks'],
      ['merge', 'skipped', 'paused from the console; no new tasks'],
      ['cleanup', 'planned', expect.stringMatching(/^re-planned: /)],
      ['merge', 'planned', expect.stringMatching(/^re-planned: /)],
    ]);
  });

  it('pausing a catalog removes every waiting task of its tables; resuming re-plans them', async () => {
    await stack.planner.handleState(
      tableState({ smallFiles: 50, newDataFiles: 2 }, { table: crowded }),
    );
    const before = (await stack.queue.waiting(third)).map((w) => w.task.id).toSorted();
    expect(before).toHaveLength(3);

    const paused = await call(`/catalogs/${third}/pause`, { method: 'POST' });
    expect(await stack.queue.waiting(third)).toEqual([]);
    expect(paused.body).toMatchObject({ outcome: 'paused; 3 waiting tasks removed' });
    // A table resumed inside a paused catalog stays paused.
    await call(`/tables/${enc(crowded)}/pause`, { method: 'POST' });
    await call(`/tables/${enc(crowded)}/resume`, { method: 'POST' });
    expect(await stack.queue.waiting(third)).toEqual([]);

    await call(`/catalogs/${third}/resume`, { method: 'POST' });
    expect((await stack.queue.waiting(third)).map((w) => w.task.id).toSorted()).toEqual(before);
  });

  it('"run now" raises a waiting task to the front of its queue, for good, audited', async () => {
    const order = async (): Promise<[string, boolean][]> => {
      const waiting = (await call(`/catalogs/${third}/queue`)).body.waiting as {
        id: string;
        runNow: boolean;
      }[];
      return waiting.map((w) => [w.id, w.runNow]);
    };
    const before = await order();
    expect(before).toHaveLength(3);
    const lastId = before.at(-1)![0];
    expect(lastId).not.toBe(before[0]![0]);
    const [type, ...rest] = lastId.split('/');
    const table = encodeURIComponent(rest.join('/'));

    const raised = await call(`/tables/${table}/tasks/${type}/run-now`, { method: 'POST' });
    expect(raised.body).toMatchObject({
      changed: true,
      outcome: 'raised to the front of the queue',
    });
    expect(await order()).toEqual([[lastId, true], ...before.slice(0, -1)]);
    expect(stack.events.events.at(-1)).toMatchObject({
      taskId: lastId,
      status: 'updated',
      reason: expect.stringMatching(/^run now: raised to the front of the queue/),
    });
    const again = await call(`/tables/${table}/tasks/${type}/run-now`, { method: 'POST' });
    expect(again.body).toMatchObject({ changed: false, outcome: 'already at the front' });

    // The aging pass and a newer state of the table keep it in front.
    await stack.queue.age(third, new Date(Date.now() + 86_400_000), DEFAULT_SCORE_OPTIONS);
    const stored = (await stack.states.get(decodeURIComponent(table)))!;
    await stack.planner.handleState({
      ...stored,
      lastSequenceNumber: String(Number(stored.lastSequenceNumber) + 1),
      metadataLocation: `${stored.metadataLocation}.next`,
    });
    expect((await order())[0]).toEqual([lastId, true]);

    expect((await call('/audit?limit=2')).body.entries).toEqual([
      expect.objectContaining({ action: `run now ${type}`, outcome: 'already at the front' }),
      expect.objectContaining({
        action: `run now ${type}`,
        target: decodeURIComponent(table),
        user: 'token',
        outcome: 'raised to the front of the queue',
      }),
    ]);
    const none = await call(`/tables/${enc(crowded)}/tasks/cleanup/run-now`, { method: 'POST' });
    expect(none.body).toMatchObject({ changed: false, outcome: 'no waiting task' });
  });

  it('lists a running task with where its run is and where its logs are', async () => {
    // A worker takes the front task, as the dispatcher does, and records its run location.
    const worker = new Worker(queueNameForCatalog(third), null, {
      connection: stack.redis,
      prefix: BULLMQ_PREFIX,
    });
    try {
      const job = await worker.getNextJob('console-test-token');
      const location: RunLocation = {
        runner: 'spark-operator',
        runId: 'ip-merge-busy-0123-a1',
        application: { namespace: 'icepack-lake', name: 'ip-merge-busy-0123-a1' },
        logs: ['kubectl logs -n icepack-lake ip-merge-busy-0123-a1-driver'],
      };
      const id = String(job?.id);
      const jobKey = `${BULLMQ_PREFIX}:${queueNameForCatalog(third)}:${id}`;
      await stack.redis.hset(jobKey, JOB_RUN_LOCATION_FIELD, JSON.stringify(location));
      const { body } = await call(`/catalogs/${third}/queue`);
      expect(body.running).toEqual([expect.objectContaining({ id, attempt: 1, run: location })]);
      expect(body.waiting).toHaveLength(2);
    } finally {
      await worker.close(true);
    }
  });
});
