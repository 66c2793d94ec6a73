import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { LedgerEntry } from '../domain/ledger.ts';
import { LedgerStore } from './ledger-store.ts';

// The ledger on real Redis: an entry per run, however often its end is reported, and one
// per resident session's idle tail beside it.

const infra = inject('infra');
let redis: Redis;

beforeAll(() => {
  redis = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  await redis.quit();
});

const entry = (runId: string | undefined, at: string, filesAfter: number): LedgerEntry => ({
  at,
  tableKey: 'cat/db/orders',
  taskId: 'merge/cat/db/orders',
  taskType: 'merge',
  ...(runId === undefined ? {} : { runId }),
  cost: { runMs: 60_000, coreSecondsRequested: 120 },
  benefit: { dataFilesRemoved: 10, deleteFilesRemoved: 0, snapshotsRemoved: -1 },
  before: { dataFiles: 30, smallFiles: 30, deleteFiles: 0, snapshots: 5, bytes: 30_000 },
  after: {
    dataFiles: filesAfter,
    smallFiles: filesAfter,
    deleteFiles: 0,
    snapshots: 6,
    bytes: 30_000,
  },
});

describe('LedgerStore', () => {
  const store = () => {
    const catalog = `c${randomUUID().slice(0, 8)}`;
    return { catalog, ledger: new LedgerStore({ connection: redis, prefix: 'test:ledger' }) };
  };
  const all = (ledger: LedgerStore, catalog: string) =>
    ledger.range(catalog, 0, Date.parse('2100-01-01T00:00:00Z'));

  it('keeps one entry for a run reported again after a dispatcher restart, the first', async () => {
    const { catalog, ledger } = store();
    const first = entry('run-a1', '2026-12-04T10:00:00.000Z', 20);
    await ledger.record(catalog, first);
    // The restarted dispatcher reports the same run again: a later time, figures read again.
    await ledger.record(catalog, entry('run-a1', '2026-12-04T10:03:00.000Z', 21));
    expect(await all(ledger, catalog)).toEqual([first]);
    await ledger.clear(catalog);
    expect(await ledger.size(catalog)).toBe(0);
    // Cleared, the run may be recorded anew (tests reuse catalogs).
    await ledger.record(catalog, first);
    expect(await ledger.size(catalog)).toBe(1);
    await ledger.clear(catalog);
  });

  it('keeps an entry per run: another attempt of the task is another entry', async () => {
    const { catalog, ledger } = store();
    await ledger.record(catalog, entry('run-a1', '2026-12-04T10:00:00.000Z', 20));
    await ledger.record(catalog, entry('run-a2', '2026-12-04T11:00:00.000Z', 19));
    expect((await all(ledger, catalog)).map((e) => e.runId)).toEqual(['run-a1', 'run-a2']);
    await ledger.clear(catalog);
  });

  it("keeps a resident session's idle tail beside its leader's run, each once (ADR 0046)", async () => {
    const { catalog, ledger } = store();
    const run = entry('batch-a1', '2026-12-04T10:00:00.000Z', 20);
    const tail = (at: string): LedgerEntry => ({
      kind: 'session-tail',
      at,
      tableKey: run.tableKey,
      taskId: run.taskId,
      taskType: run.taskType,
      runId: 'batch-a1',
      cost: { runMs: 30_000, coreSecondsRequested: 90 },
    });
    expect(await ledger.record(catalog, run)).toBe(true);
    // Its own marker: the leader's run does not shadow it, nor it a re-reported run.
    expect(await ledger.record(catalog, tail('2026-12-04T10:00:31.000Z'))).toBe(true);
    expect(await ledger.record(catalog, tail('2026-12-04T10:00:31.000Z'))).toBe(false);
    expect(await ledger.record(catalog, tail('2026-12-04T10:02:00.000Z'))).toBe(false);
    expect(await ledger.record(catalog, entry('batch-a1', '2026-12-04T10:03:00.000Z', 21))).toBe(
      false,
    );
    expect((await all(ledger, catalog)).map((e) => e.kind ?? 'run')).toEqual([
      'run',
      'session-tail',
    ]);
    await ledger.clear(catalog);
  });

  it('counts a redelivered event once, and entries of older dispatchers (no run id) by their content', async () => {
    const { catalog, ledger } = store();
    const old = entry(undefined, '2026-12-04T10:00:00.000Z', 20);
    await ledger.record(catalog, old);
    await ledger.record(catalog, old);
    await ledger.record(catalog, entry(undefined, '2026-12-04T12:00:00.000Z', 18));
    expect(await ledger.size(catalog)).toBe(2);
    await ledger.clear(catalog);
  });
});
