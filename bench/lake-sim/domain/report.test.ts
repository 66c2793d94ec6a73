import { describe, expect, it } from 'vitest';
import { DEFAULTS } from './options.ts';
import { htmlReport, invariantRows, markdownReport, outcomeRows, runLabels } from './report.ts';
import { invariants, totalsOverTime } from './result.ts';
import type { RunResult, Sample } from './result.ts';

const sample = (t: number, table: string, dataFiles: number): Sample => ({
  t,
  table,
  dataFiles,
  smallFiles: dataFiles,
  deleteFiles: 0,
  snapshots: 3,
  metadataBytes: 1_000,
});

function run(policy: RunResult['policy'], over: Partial<RunResult> = {}): RunResult {
  return {
    policy,
    options: { ...DEFAULTS, minutes: 3 },
    catalog: 'sim1',
    machine: 'nproc: 2',
    startedAt: '2026-12-01T15:00:00.000Z',
    endedAt: '2026-12-01T15:10:00.000Z',
    tables: [
      { name: 'a', kind: 'stream', periodSeconds: 20, actions: 9 },
      { name: 'b', kind: 'cdc', periodSeconds: 45, actions: 4 },
    ],
    samples: [sample(0, 'a', 4), sample(0, 'b', 4), sample(60, 'a', 10), sample(60, 'b', 7)],
    writes: {
      commits: 100,
      failures: 2,
      gaveUp: 0,
      skipped: 0,
      failuresByError: { ValidationException: 2 },
      perTable: {},
    },
    probes: [{ checkpoint: 'end', table: 'a', query: 'full-scan', ms: 120 }],
    deletes: [{ checkpoint: 'end', table: 'b', deleteFiles: 5, live: 3, dangling: 2 }],
    cron: [],
    tasks: [],
    taskEvents: 0,
    duplicates: [],
    falseLosses: [],
    lifecycle: [],
    verify: [
      {
        table: 'a',
        ref: 'main',
        ok: true,
        expected: { rows: 10, hash: 'ab' },
        actual: { rows: 10, hash: 'ab' },
        missing: 0,
        extra: 0,
        duplicated: 0,
        changed: 0,
      },
    ],
    coreSeconds: 42,
    ...over,
  };
}

describe('reports', () => {
  it('sums every table per sweep', () => {
    expect(totalsOverTime(run('none').samples).map((s) => [s.t, s.dataFiles])).toEqual([
      [0, 8],
      [60, 17],
    ]);
  });

  it('lists each broken invariant, and none for a clean run', () => {
    const clean = run('icepack');
    expect(invariants(clean)).toMatchObject({
      wasted: [],
      duplicates: [],
      data: [],
      verified: true,
    });
    const bad = run('icepack', {
      startedAt: '2026-12-03T10:36:39.568Z',
      duplicates: ['run r-a1 launched 2 times'],
      verify: [{ ...clean.verify[0]!, ok: false, actual: { rows: 11, hash: 'cd' }, duplicated: 1 }],
    });
    expect(invariantRows([clean, bad])).toContainEqual(['duplicate Spark runs', '0', '1']);
    const md = markdownReport([clean, bad], './dev bench lake-sim --minutes 3 --policy icepack');
    expect(md).toContain('icepack (2026-12-03 10:36): duplicate run: run r-a1 launched 2 times');
    expect(md).toContain('data differs in a main: expected 10 rows, read 11');
  });

  it('labels each run: the resident-session bound, and the start of runs that share a label', () => {
    const sessions = (s: number, startedAt: string) =>
      run('icepack', { startedAt, options: { ...run('icepack').options, residentIdleSeconds: s } });
    expect(
      runLabels([
        sessions(0, '2026-12-03T10:36:00Z'),
        sessions(60, '2026-12-03T21:22:00Z'),
        run('cron'),
      ]),
    ).toEqual(['icepack', 'icepack, sessions 60 s', 'cron']);
    expect(
      runLabels([sessions(0, '2026-12-02T09:00:00Z'), sessions(0, '2026-12-03T10:36:00Z')]),
    ).toEqual(['icepack (2026-12-02 09:00)', 'icepack (2026-12-03 10:36)']);
    expect(runLabels([run('none'), run('none')])).toEqual([
      expect.stringMatching(/#1$/),
      expect.stringMatching(/#2$/),
    ]);
  });

  it('reports the end figures per policy and a page that carries its chart library', () => {
    const rows = outcomeRows([run('none'), run('cron', { coreSeconds: 300 })]);
    expect(rows).toContainEqual(['data files at end (all tables)', '17', '17']);
    expect(rows).toContainEqual([
      'delete files at end: live / dangling (merge-on-read tables)',
      '3 / 2',
      '3 / 2',
    ]);
    const compute =
      "maintenance compute (core-seconds; Icepack: its runs and its resident sessions' idle tails)";
    expect(rows).toContainEqual([compute, '42', '300']);
    // Icepack's sessions' idle tails are in its compute and told apart (ADR 0046).
    const icepack = run('icepack', {
      coreSeconds: 130,
      sessionTails: { sessions: 2, coreSecondsRequested: 60 },
    });
    const withTails = outcomeRows([icepack, run('cron', { coreSeconds: 300 })]);
    expect(withTails).toContainEqual([compute, '130', '300']);
    expect(withTails).toContainEqual([
      "Icepack resident sessions' idle tails: sessions / core-s requested (in the compute above)",
      '2 / 60',
      'n/a',
    ]);
    // Work in cron's terms: the tasks' own time beside cron's calls' time.
    const timed = run('icepack', {
      taskTime: { applications: 2, tasks: 5, coreSeconds: 90, warmTasks: 3, warmCoreSeconds: 12 },
    });
    expect(outcomeRows([timed, run('cron', { coreSeconds: 300 }), run('none')])).toContainEqual([
      "work in cron's terms: its tasks' or calls' own time × cores (core-s; Icepack: all tasks / without each Spark application's longest, where its session start is)",
      '90 (5 tasks) / 12 (3 tasks)',
      '300',
      'n/a',
    ]);
    const html = htmlReport([run('none')], '# md', 'window.Chart = function () {};');
    expect(html).toContain('window.Chart = function () {};');
    expect(html).toContain('<canvas id="snapshots">');
    expect(html).not.toMatch(/<script src=/);
  });
});
