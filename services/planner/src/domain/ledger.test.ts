import { sampleTableId, ValidationError, type TaskEvent } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LEDGER_BOUNDS,
  ledgerEntryOf,
  ledgerEntryOfTail,
  ledgerReport,
  ledgerTotals,
  ledgerTrim,
  MAX_LISTED_ENTRIES,
  parseLedgerQuery,
  type LedgerEntry,
} from './ledger.ts';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const orders = sampleTableId({ catalog: 'prod', namespace: ['sales'], name: 'orders' });

function entry(at: string, table: string, over: Partial<LedgerEntry> = {}): LedgerEntry {
  return {
    at,
    tableKey: table,
    taskId: `merge/${table}`,
    taskType: 'merge',
    cost: { runMs: 10_000, coreSecondsRequested: 20, coreSecondsUsed: 12, bytesRead: 100 },
    benefit: { dataFilesRemoved: 9, deleteFilesRemoved: 1, snapshotsRemoved: -1, bytesSaved: 5 },
    ...over,
  };
}

function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof ValidationError) return error.issues[0]?.path;
    throw error;
  }
  return undefined;
}

describe('ledgerEntryOf', () => {
  const event: TaskEvent = {
    taskId: 'merge/prod/sales/orders',
    table: orders,
    taskType: 'merge',
    status: 'succeeded',
    at: '2026-12-01T11:00:00.000Z',
    runId: 'r-a1',
    cost: { runMs: 1_000, coreSecondsRequested: 2 },
    benefit: { dataFilesRemoved: 3, deleteFilesRemoved: 0, snapshotsRemoved: -1 },
    before: { dataFiles: 4, smallFiles: 4, deleteFiles: 0, snapshots: 7, bytes: 4_000 },
    after: { dataFiles: 1, smallFiles: 1, deleteFiles: 0, snapshots: 8, bytes: 3_900 },
  };

  it('keeps a succeeded run’s cost, benefit and before/after figures under its table key', () => {
    expect(ledgerEntryOf(event)).toEqual({
      at: event.at,
      tableKey: 'prod/sales/orders',
      taskId: event.taskId,
      taskType: 'merge',
      runId: 'r-a1',
      cost: event.cost,
      benefit: event.benefit,
      before: event.before,
      after: event.after,
    });
  });

  it('takes succeeded events only; an older one without a ledger is an entry without cost', () => {
    expect(ledgerEntryOf({ ...event, status: 'failed' })).toBeUndefined();
    const old: TaskEvent = { ...event };
    delete old.cost;
    delete old.benefit;
    delete old.runId;
    delete old.before;
    delete old.after;
    expect(ledgerEntryOf(old)).toEqual({
      at: event.at,
      tableKey: 'prod/sales/orders',
      taskId: event.taskId,
      taskType: 'merge',
    });
  });
});

describe('ledgerTrim', () => {
  it('keeps the retention window and at most maxEntries', () => {
    expect(ledgerTrim(NOW, { retentionMs: 3_600_000, maxEntries: 50 })).toEqual({
      keepFromMs: NOW - 3_600_000,
      keepNewest: 50,
    });
    expect(DEFAULT_LEDGER_BOUNDS).toEqual({ retentionMs: 30 * 86_400_000, maxEntries: 100_000 });
  });
});

describe('parseLedgerQuery', () => {
  it('defaults the window to the day before now', () => {
    expect(parseLedgerQuery({ catalog: 'prod' }, NOW)).toEqual({
      catalog: 'prod',
      sinceMs: NOW - 86_400_000,
      untilMs: NOW,
    });
  });

  it('reads a table key and an explicit window', () => {
    expect(
      parseLedgerQuery(
        {
          catalog: 'prod',
          table: 'prod/sales/orders',
          since: '2026-11-30T00:00:00Z',
          until: '2026-12-01T01:00:00+01:00',
        },
        NOW,
      ),
    ).toEqual({
      catalog: 'prod',
      table: 'prod/sales/orders',
      sinceMs: Date.parse('2026-11-30T00:00:00Z'),
      untilMs: Date.parse('2026-12-01T00:00:00Z'),
    });
  });

  it.each([
    [{}, 'catalog'],
    [{ catalog: '' }, 'catalog'],
    [{ catalog: ['a', 'b'] }, 'catalog'],
    [{ catalog: 'prod', table: 'orders' }, 'table'],
    [{ catalog: 'prod', table: 'dev/sales/orders' }, 'table'],
    [{ catalog: 'prod', since: 'yesterday' }, 'since'],
    [{ catalog: 'prod', since: '2026-12-01' }, 'since'],
    [{ catalog: 'prod', until: '2026-13-01T00:00:00Z' }, 'until'],
    [{ catalog: 'prod', since: '2026-12-01T10:00:00Z', until: '2026-12-01T09:00:00Z' }, 'since'],
  ])('rejects %j naming %s', (query, field) => {
    expect(fieldOf(() => parseLedgerQuery(query, NOW))).toBe(field);
  });
});

describe('ledgerTotals', () => {
  it('adds cost and benefit, counting runs without cost or CPU apart', () => {
    const totals = ledgerTotals([
      entry('2026-12-01T10:00:00Z', 'prod/sales/orders'),
      entry('2026-12-01T10:30:00Z', 'prod/sales/orders', {
        taskType: 'cleanup',
        cost: { runMs: 5_000, coreSecondsRequested: 10.0005 },
        benefit: { dataFilesRemoved: 0, deleteFilesRemoved: 0, snapshotsRemoved: 40 },
      }),
      entry('2026-12-01T11:00:00Z', 'prod/sales/orders', { cost: undefined, benefit: undefined }),
    ]);
    expect(totals).toEqual({
      runs: 3,
      byType: { merge: 2, cleanup: 1 },
      cost: {
        runMs: 15_000,
        coreSecondsRequested: 30.001,
        coreSecondsUsed: 12,
        bytesRead: 100,
        bytesWritten: 0,
        filesRewritten: 0,
      },
      benefit: {
        dataFilesRemoved: 9,
        smallFilesRemoved: 0,
        deleteFilesRemoved: 1,
        snapshotsRemoved: 39,
        bytesSaved: 5,
      },
      sessionTails: 0,
      sessionTailCoreSeconds: 0,
      runsWithoutCost: 1,
      runsWithoutCpu: 2,
    });
  });

  it('adds a resident session’s idle tail to the cost, not to the runs (ADR 0046)', () => {
    const run = entry('2026-12-01T10:00:00Z', 'prod/sales/orders', { runId: 'batch-a1' });
    const tail = ledgerEntryOfTail({
      taskId: run.taskId,
      table: orders,
      taskType: 'merge',
      runId: 'batch-a1',
      at: '2026-12-01T10:00:31Z',
      idleMs: 30_000,
      cost: { runMs: 30_000, coreSecondsRequested: 90 },
    });
    expect(tail).toEqual({
      kind: 'session-tail',
      at: '2026-12-01T10:00:31Z',
      tableKey: 'prod/sales/orders',
      taskId: run.taskId,
      taskType: 'merge',
      runId: 'batch-a1',
      cost: { runMs: 30_000, coreSecondsRequested: 90 },
    });
    expect(ledgerTotals([run, tail])).toMatchObject({
      runs: 1,
      byType: { merge: 1 },
      sessionTails: 1,
      sessionTailCoreSeconds: 90,
      cost: { runMs: 40_000, coreSecondsRequested: 110, coreSecondsUsed: 12 },
      benefit: { dataFilesRemoved: 9 },
      // A tail has no CPU measured and no benefit: not a run without them.
      runsWithoutCost: 0,
      runsWithoutCpu: 0,
    });
  });
});

describe('ledgerReport', () => {
  const stored = [
    entry('2026-12-01T08:59:59Z', 'prod/sales/orders'),
    entry('2026-12-01T09:00:00Z', 'prod/sales/orders'),
    entry('2026-12-01T10:00:00Z', 'prod/sales/items', {
      cost: { runMs: 1, coreSecondsRequested: 99 },
    }),
    entry('2026-12-01T11:00:00Z', 'prod/sales/orders'),
    entry('2026-12-01T11:00:01Z', 'prod/sales/orders'),
  ];
  const window = {
    sinceMs: Date.parse('2026-12-01T09:00:00Z'),
    untilMs: Date.parse('2026-12-01T11:00:00Z'),
  };

  it('a catalog: totals of the window (both ends included) and one row per table, costliest first', () => {
    const report = ledgerReport({ catalog: 'prod', ...window }, stored, NOW, DEFAULT_LEDGER_BOUNDS);
    expect(report.totals.runs).toBe(3);
    expect(report.tables?.map((t) => [t.tableKey, t.runs])).toEqual([
      ['prod/sales/items', 1],
      ['prod/sales/orders', 2],
    ]);
    expect(report).toMatchObject({
      catalog: 'prod',
      since: '2026-12-01T09:00:00.000Z',
      until: '2026-12-01T11:00:00.000Z',
      retainedSince: '2026-11-01T12:00:00.000Z',
    });
    expect(report.entries).toBeUndefined();
  });

  it('a table: its totals and entries, newest first', () => {
    const report = ledgerReport(
      { catalog: 'prod', table: 'prod/sales/orders', ...window },
      stored,
      NOW,
      DEFAULT_LEDGER_BOUNDS,
    );
    expect(report.totals.runs).toBe(2);
    expect(report.entries?.map((e) => e.at)).toEqual([
      '2026-12-01T11:00:00Z',
      '2026-12-01T09:00:00Z',
    ]);
    expect(report.tables).toBeUndefined();
    expect(report.entriesOmitted).toBeUndefined();
  });

  it('lists at most MAX_LISTED_ENTRIES entries of a table and says how many it left out', () => {
    const many = Array.from({ length: MAX_LISTED_ENTRIES + 3 }, (_, i) =>
      entry(new Date(NOW - 1_000 * (i + 1)).toISOString(), 'prod/sales/orders'),
    );
    const report = ledgerReport(
      { catalog: 'prod', table: 'prod/sales/orders', sinceMs: 0, untilMs: NOW },
      many,
      NOW,
      DEFAULT_LEDGER_BOUNDS,
    );
    expect(report.totals.runs).toBe(MAX_LISTED_ENTRIES + 3);
    expect(report.entries).toHaveLength(MAX_LISTED_ENTRIES);
    expect(report.entries?.[0]?.at).toBe(new Date(NOW - 1_000).toISOString());
    expect(report.entriesOmitted).toBe(3);
  });
});
