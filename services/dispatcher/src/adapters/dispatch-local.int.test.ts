import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RestCatalog } from '@icepack/iceberg';
import { createLogger, EnvelopeProducer, KafkaClient } from '@icepack/runtime';
import { BULLMQ_PREFIX, queueNameForCatalog, type Task } from '@icepack/types';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LocalRunner } from '../runners/local-runner.ts';
import { LocalBudgetQuota } from './quota.ts';
import { CatalogTableHealth } from './table-health.ts';
import { KafkaDispatchSink } from './task-events.ts';
import { TaskWorker } from './task-worker.ts';
import { dispatchTables, type DispatchTruth } from './testing/dispatch-tables.ts';
import { cleanupTask, mergeTask, sortTask } from './testing/sample-tasks.ts';
import { TaskEventLog } from './testing/task-event-log.ts';
import { testBinding } from './testing/test-binding.ts';

const infra = inject('infra');
const suffix = Math.random().toString(36).slice(2, 8);
const catalogName = `disp${suffix}`;
const tableOptions = {
  python: infra.python,
  catalogUri: infra.catalogUri,
  sparkJars: infra.sparkJars,
  catalogName,
  prefix: `local_${suffix}`,
};
const KEYS = ['unpartitioned-small-files', 'sorted', 'many-snapshots', 'odd-name'];
const logger = createLogger({ service: 'dispatch-test', level: 'warn' });

let before: Record<string, DispatchTruth>;
let after: Record<string, DispatchTruth>;
let redis: Redis;
let kafka: KafkaClient;
let producer: EnvelopeProducer;
let events: TaskEventLog;
let worker: TaskWorker;
let queue: Queue;
const tasks: Record<string, Task> = {};

function truth(key: string, which: Record<string, DispatchTruth> = before): DispatchTruth {
  const t = which[key];
  if (t === undefined) throw new Error(`no truth for ${key}`);
  return t;
}

describe('dispatch with the local runner on real fixture tables', () => {
  beforeAll(async () => {
    before = await dispatchTables(KEYS, tableOptions);
    redis = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
    kafka = new KafkaClient({ brokers: infra.kafkaBrokers, clientId: 'dispatch-test', logger });
    producer = new EnvelopeProducer(kafka);
    await producer.connect();
    events = new TaskEventLog(infra.kafkaBrokers, (e) => e.table.catalog === catalogName);
    await events.start();
    const catalog = new RestCatalog({ name: catalogName, uri: infra.catalogUri });
    // Room for one small job at a time (driver 1 core + executor 1 core): the second task
    // has to wait for quota, then runs.
    const binding = testBinding(catalogName, { cpu: '3', memory: '8Gi', slots: 2 });
    worker = new TaskWorker({
      binding,
      connection: redis,
      runner: new LocalRunner({ stateDir: await mkdtemp(join(tmpdir(), 'icepack-runs-')) }),
      quota: new LocalBudgetQuota({ redis, prefix: `test-${suffix}` }),
      sink: new KafkaDispatchSink(producer),
      health: new CatalogTableHealth(() => catalog),
      catalog: { name: catalogName, uri: infra.catalogUri },
      logger,
      quotaWaitMs: 2_000,
      timeoutMs: 15 * 60_000,
    });
    queue = new Queue(queueNameForCatalog(catalogName), {
      connection: redis,
      prefix: BULLMQ_PREFIX,
    });

    const sorted = truth('sorted');
    tasks.merge = mergeTask(truth('unpartitioned-small-files'), 5);
    tasks.sort = sortTask(sorted, 'sort', [
      { name: 'event_ts', direction: 'asc', nullOrder: 'nulls-first' },
      { name: 'id', direction: 'desc', nullOrder: 'nulls-last' },
    ]);
    tasks.cleanup = cleanupTask(truth('many-snapshots'), 5, new Date(Date.now() + 60_000));
    tasks.odd = mergeTask(truth('odd-name'), 2);
    // A z-order on a column the table does not have: the job fails, and says why.
    tasks.failing = sortTask(truth('odd-name'), 'zorder', [{ name: 'no_such_column' }]);
    let priority = 1;
    for (const task of Object.values(tasks)) {
      await queue.add(task.type, task, {
        jobId: task.id,
        priority: priority++,
        removeOnComplete: true,
        removeOnFail: true,
      });
    }
    await worker.start();
    for (const task of Object.values(tasks))
      await events.waitFor(task.id, ['succeeded', 'failed'], 1_500_000);
    after = await dispatchTables(KEYS, tableOptions, { truthOnly: true, fileRows: ['sorted'] });
  }, 1_800_000);

  afterAll(async () => {
    await worker.close(true);
    await queue.obliterate({ force: true });
    await queue.close();
    await events.stop();
    await producer.disconnect();
    await kafka.close();
    redis.disconnect();
  });

  it('merge turns the small files into few files; rows and content unchanged', async () => {
    const b = truth('unpartitioned-small-files');
    const a = truth('unpartitioned-small-files', after);
    expect(b.dataFiles.count).toBe(60);
    expect(a.dataFiles.count).toBe(1);
    expect(a.contentChecksum).toEqual(b.contentChecksum);
    expect(a.recordCount).toBe(b.recordCount);
    const done = await events.waitFor(tasks.merge!.id, ['succeeded']);
    expect(done.before).toMatchObject({ dataFiles: 60, smallFiles: 60 });
    expect(done.after).toMatchObject({
      dataFiles: 1,
      smallFiles: 1,
      snapshots: b.snapshotCount + 1,
    });
    expect(done.after!.bytes).toBeLessThan(done.before!.bytes);
  });

  it('sort leaves every data file sorted by the task order; content unchanged', () => {
    const b = truth('sorted');
    const a = truth('sorted', after);
    expect(a.contentChecksum).toEqual(b.contentChecksum);
    expect(a.dataFiles.count).toBeLessThan(b.dataFiles.count);
    // Columns: id, kind, payload, score, event_ts → (event_ts asc nulls first, id desc).
    for (const rows of a.fileRows ?? []) {
      const keys = rows.map((r) => [r[4] ?? '', Number(r[0])] as const);
      const ordered = [...keys].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : y[1] - x[1]));
      expect(keys).toEqual(ordered);
    }
    expect(a.fileRows?.flat()).toHaveLength(b.recordCount);
  });

  it('expire keeps the last 5 of main, the branch head and the tagged snapshot only', () => {
    const b = truth('many-snapshots');
    const a = truth('many-snapshots', after);
    const parent = new Map(b.snapshots.map((s) => [s.snapshotId, s.parentId]));
    const main: string[] = [];
    for (let id = b.currentSnapshotId; id !== null && main.length < 5; id = parent.get(id) ?? null)
      main.push(id);
    const tag = b.refs.find((r) => r.name === 'release-1')!.snapshotId;
    const branch = b.refs.find((r) => r.name === 'audit')!.snapshotId;
    expect([...a.snapshotIds].sort()).toEqual([...new Set([...main, tag, branch])].sort());
    expect(a.refs).toEqual(b.refs);
    expect(a.contentChecksum).toEqual(b.contentChecksum);
  });

  it('handles the table named with a dot, space, quote and backtick', async () => {
    const b = truth('odd-name');
    const a = truth('odd-name', after);
    expect(a.id.name).toBe("odd.name with 'quote' and `tick`");
    expect(a.dataFiles.count).toBeLessThan(b.dataFiles.count);
    expect(a.contentChecksum).toEqual(b.contentChecksum);
    expect((await events.waitFor(tasks.odd!.id, ['succeeded'])).status).toBe('succeeded');
  });

  it("puts a failing job's error message on the failed task event", async () => {
    const failed = await events.waitFor(tasks.failing!.id, ['failed', 'succeeded']);
    expect(failed.status).toBe('failed');
    expect(failed.error?.retryable).toBe(false);
    expect(failed.error?.message).toMatch(/no_such_column/);
    expect(
      events
        .of(tasks.failing!.id)
        .map((e) => e.status)
        .filter((s) => s !== 'updated'),
    ).toEqual(['started', 'failed']);
  });

  it('lets a task wait for quota (delayed, not failed) and then run', () => {
    const waited = Object.values(tasks).filter((t) =>
      events
        .of(t.id)
        .some((e) => e.status === 'updated' && /waiting for quota/.test(e.reason ?? '')),
    );
    expect(waited.length).toBeGreaterThan(0);
    for (const task of waited) {
      const statuses = events.of(task.id).map((e) => e.status);
      expect(statuses.at(-1)).toMatch(/succeeded|failed/);
      expect(statuses).toContain('started');
    }
  });
});
