import type { HealthFigures } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { ledgerEntry, sessionTailCost } from './ledger.ts';

const before: HealthFigures = {
  dataFiles: 40,
  smallFiles: 38,
  deleteFiles: 6,
  snapshots: 20,
  bytes: 10_000,
};
// A writer appended 2 small files while the merge ran.
const after: HealthFigures = {
  dataFiles: 5,
  smallFiles: 4,
  deleteFiles: 0,
  snapshots: 22,
  bytes: 9_900,
};

describe('ledgerEntry', () => {
  it('takes cost and benefit from the job result: its own commits, not the writers’', () => {
    const entry = ledgerEntry({
      cores: 2,
      runMs: 30_500,
      before,
      after,
      job: {
        snapshotsBefore: 20,
        snapshotsAfter: 21,
        cpuSeconds: 41.2344,
        commits: {
          bytesRead: 9_500,
          bytesWritten: 9_300,
          filesRewritten: 43,
          dataFilesRemoved: 37,
          deleteFilesRemoved: 6,
        },
      },
    });
    expect(entry).toEqual({
      cost: {
        runMs: 30_500,
        coreSecondsRequested: 61,
        coreSecondsUsed: 41.234,
        bytesRead: 9_500,
        bytesWritten: 9_300,
        filesRewritten: 43,
      },
      benefit: {
        dataFilesRemoved: 37,
        smallFilesRemoved: 34,
        deleteFilesRemoved: 6,
        snapshotsRemoved: -1,
        bytesSaved: 200,
      },
    });
  });

  it('without a job result (Spark operator): requested cores and before − after', () => {
    expect(ledgerEntry({ cores: 3, runMs: 1_000, before, after })).toEqual({
      cost: { runMs: 1_000, coreSecondsRequested: 3 },
      benefit: {
        dataFilesRemoved: 35,
        smallFilesRemoved: 34,
        deleteFilesRemoved: 6,
        snapshotsRemoved: -2,
        bytesSaved: 100,
      },
    });
  });

  it('charges a resident session’s held idle time before the task as run time (ADR 0045)', () => {
    expect(ledgerEntry({ cores: 2, runMs: 4_000, idleMs: 6_000 }).cost).toEqual({
      runMs: 10_000,
      coreSecondsRequested: 20,
    });
  });

  it('without figures: the cost only', () => {
    expect(ledgerEntry({ cores: 2, runMs: -5, before })).toEqual({
      cost: { runMs: 0, coreSecondsRequested: 0 },
    });
  });
});

describe('sessionTailCost', () => {
  it('charges a session’s idle tail as the session’s cores held for it (ADR 0046)', () => {
    expect(sessionTailCost(3, 29_999.6)).toEqual({ runMs: 30_000, coreSecondsRequested: 90 });
    expect(sessionTailCost(3, 1_234)).toEqual({ runMs: 1_234, coreSecondsRequested: 3.702 });
    expect(sessionTailCost(3, -5)).toEqual({ runMs: 0, coreSecondsRequested: 0 });
  });
});
