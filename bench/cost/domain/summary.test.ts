import { describe, expect, it } from 'vitest';
import type { TaskRow } from '../../lake-sim/domain/ledger.ts';
import { markdownReport } from './report.ts';
import { parseOptions } from './options.ts';
import {
  classCost,
  classOf,
  dataMismatches,
  largeMerges,
  maintainedTables,
  meanLoad,
  median,
  perTaskSaving,
  problems,
} from './summary.ts';
import type { CostRun, TableCheck, TableFigures } from './summary.ts';

const figures = (over: Partial<TableFigures> = {}): TableFigures => ({
  rows: 4500,
  checksum: '123456789012345678901',
  dataFiles: 9,
  bytes: 200_000,
  snapshots: 3,
  ...over,
});

function row(table: string, over: Partial<TaskRow> = {}): TaskRow {
  return {
    taskId: `merge/c/cost/${table}`,
    table: `cost.${table}`,
    type: 'merge',
    runId: 'batch-1-a1',
    attempt: 1,
    startedAt: 1_000,
    endedAt: 11_000,
    runMs: 10_000,
    coreSecondsRequested: 20,
    coreSecondsUsed: 8,
    outcome: 'succeeded',
    wasted: false,
    ...over,
  };
}

const checks: TableCheck[] = [
  { table: 'small_0000', size: 'small', before: figures(), after: figures({ dataFiles: 1 }) },
  { table: 'small_0001', size: 'small', before: figures(), after: figures({ snapshots: 1 }) },
  {
    table: 'large_00',
    size: 'large',
    before: figures({ rows: 1e6, dataFiles: 600 }),
    after: figures({ rows: 1e6, dataFiles: 600 }),
  },
];

function run(over: Partial<CostRun> = {}): CostRun {
  return {
    mode: 'batched',
    sizing: 'learned',
    catalog: 'costab',
    machine: 'nproc: 2',
    startedAt: '2026-12-03T07:00:00.000Z',
    endedAt: '2026-12-03T07:20:00.000Z',
    createSeconds: 60,
    maintainMs: 600_000,
    drained: true,
    tables: checks,
    rows: [
      row('small_0000', { coreSecondsRequested: 40, coreSecondsUsed: 30 }),
      row('small_0001', {
        startedAt: 2_000,
        endedAt: 4_000,
        coreSecondsRequested: 4,
        coreSecondsUsed: 2,
      }),
      row('large_00', {
        runId: 'r-large',
        startedAt: 5_000,
        endedAt: 65_000,
        coreSecondsRequested: 120,
        coreSecondsUsed: undefined,
      }),
      row('large_00', {
        runId: 'r-large-2',
        type: 'cleanup',
        outcome: 'retrying',
        error: 'out-of-memory: Java heap space',
        coreSecondsUsed: undefined,
      }),
    ],
    duplicates: [],
    ...over,
  };
}

describe('classOf', () => {
  it('reads the class from the table’s name, with or without its namespace', () => {
    expect(classOf('cost.large_03')).toBe('large');
    expect(classOf('large_03')).toBe('large');
    expect(classOf('cost.small_0003')).toBe('small');
  });
});

describe('classCost', () => {
  it('sums the small-table and large-table runs apart, with their span and per-run figures', () => {
    const small = classCost(run(), 'small');
    expect(small).toEqual({
      tables: 2,
      runs: 2,
      byOutcome: { succeeded: 2 },
      byType: { merge: 2 },
      coreSecondsRequested: 44,
      coreSecondsUsed: 32,
      runsWithUsed: 2,
      killedForMemory: 0,
      spanMs: 10_000,
      perRun: { requested: 22, used: 16 },
    });
    const large = classCost(run(), 'large');
    expect(large).toMatchObject({
      tables: 1,
      runs: 2,
      byOutcome: { succeeded: 1, retrying: 1 },
      coreSecondsRequested: 140,
      coreSecondsUsed: 0,
      runsWithUsed: 0,
      killedForMemory: 1,
      spanMs: 64_000,
      perRun: { requested: 70 },
    });
  });

  it('has no per-run figures without runs', () => {
    expect(classCost(run({ rows: [] }), 'small')).toMatchObject({ runs: 0, spanMs: 0 });
    expect(classCost(run({ rows: [] }), 'small').perRun).toBeUndefined();
  });
});

describe('data check', () => {
  it('finds a changed checksum, a lost row and a table not read again', () => {
    const broken: TableCheck[] = [
      { table: 'a', size: 'small', before: figures(), after: figures({ checksum: '9' }) },
      { table: 'b', size: 'small', before: figures(), after: figures({ rows: 4499 }) },
      { table: 'c', size: 'small', before: figures() },
      { table: 'd', size: 'small', before: figures(), after: figures({ dataFiles: 1 }) },
    ];
    expect(dataMismatches(broken)).toEqual([
      'a: 4500 rows (checksum 123456789012345678901) before, 4500 rows (checksum 9) after',
      'b: 4500 rows (checksum 123456789012345678901) before, 4499 rows (checksum 123456789012345678901) after',
      'c: not read after maintenance',
    ]);
    expect(dataMismatches(checks)).toEqual([]);
  });

  it('counts the tables whose files or snapshots went down', () => {
    expect(maintainedTables(checks)).toBe(2);
  });
});

describe('problems', () => {
  it('is empty for a sound run', () => {
    expect(problems(run())).toEqual([]);
  });

  it('names different data, a duplicate run, an undrained queue and a run that measured nothing', () => {
    const bad = run({
      tables: [{ table: 'x', size: 'small', before: figures() }],
      duplicates: ['run r1 launched 2 times'],
      drained: false,
      rows: [row('x', { outcome: 'failed' })],
    });
    expect(problems(bad)).toEqual([
      'x: not read after maintenance',
      'run r1 launched 2 times',
      'no task succeeded: nothing was measured',
      'the queue did not drain within the settle cap',
    ]);
  });
});

describe('perTaskSaving', () => {
  const single = classCost(
    run({
      mode: 'single',
      rows: [row('small_0000', { coreSecondsUsed: 30, coreSecondsRequested: 80 })],
    }),
    'small',
  );
  it('compares CPU used per task when both modes carry it', () => {
    expect(perTaskSaving(single, classCost(run(), 'small'))).toEqual({
      by: 'used',
      factor: 30 / 16,
    });
  });

  it('falls back to requested core-seconds, and to nothing without runs', () => {
    const noUsed = classCost(
      run({ rows: [row('small_0000', { coreSecondsUsed: undefined, coreSecondsRequested: 8 })] }),
      'small',
    );
    expect(perTaskSaving(single, noUsed)).toEqual({ by: 'requested', factor: 10 });
    expect(perTaskSaving(single, classCost(run({ rows: [] }), 'small'))).toBeUndefined();
  });
});

describe('markdownReport', () => {
  it('reports per mode and class, the per-task comparison labelled as extrapolated, and problems', () => {
    const single = run({
      mode: 'single',
      rows: [row('small_0000', { runId: 'r-1', coreSecondsUsed: 30, coreSecondsRequested: 80 })],
      drained: false,
    });
    const md = markdownReport(
      [run(), single],
      parseOptions(['--small', '2', '--large', '1'], '/out'),
      './dev bench cost --small 2 --large 1',
      'Smoke',
    );
    expect(md).toContain('# Smoke');
    expect(md).toContain(
      '| batched, learned | small | 2 | 2 | merge 2 | succeeded 2 | 44.0 | 32.0 (2 runs) | 22.0 | 16.0 | 0 | 10 |',
    );
    expect(md).toContain('batched costs **1.9× fewer** core-seconds used per small-table task');
    expect(md).toContain('Extrapolated per task (not measured)');
    expect(md).toContain(
      '| single, learned | 60.0 | 600 | no | 2 of 3 | yes | the queue did not drain within the settle cap |',
    );
    expect(md).toContain('out-of-memory: Java heap space');
  });
});

describe('largeMerges', () => {
  const merge = (runMs: number, used: number, requested: number) =>
    row('large_01', {
      runId: `r-${String(runMs)}`,
      runMs,
      coreSecondsUsed: used,
      coreSecondsRequested: requested,
    });

  it('pools the succeeded large-table merges of several passes: count and medians', () => {
    const a = run({ rows: [merge(40_000, 38, 80), merge(44_000, 40, 88), row('small_0000')] });
    const b = run({
      rows: [
        merge(50_000, 39, 100),
        row('large_02', { type: 'cleanup', runMs: 5_000 }),
        row('large_03', { outcome: 'retrying', runMs: 90_000 }),
      ],
    });
    expect(largeMerges([a, b])).toEqual({
      runs: 3,
      medianRunSeconds: 44,
      medianCpuSeconds: 39,
      medianCores: 2,
    });
  });

  it('has no medians without large merges', () => {
    expect(largeMerges([run({ rows: [row('small_0000')] })])).toEqual({ runs: 0 });
  });

  it('takes the middle of an even count as the mean of the two middle values', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeUndefined();
  });

  it('reads the mean load the run recorded, and nothing from a machine line without it', () => {
    expect(
      meanLoad(
        run({ machine: 'nproc: 2\n1-min load average while maintaining: mean 3.6, max 5.0' }),
      ),
    ).toBe(3.6);
    expect(meanLoad(run())).toBeUndefined();
  });
});

describe('markdownReport, passes alternating learned and fixed', () => {
  it('compares large merges pooled over every pass and lists the passes in the order they ran', () => {
    const pass = (sizing: 'learned' | 'fixed', startedAt: string, runMs: number, load: string) =>
      run({
        sizing,
        startedAt,
        machine: `nproc: 2\n1-min load average while maintaining: mean ${load}, max 9`,
        rows: [
          row('large_00', {
            runMs,
            coreSecondsUsed: runMs / 1000,
            coreSecondsRequested: (2 * runMs) / 1000,
          }),
        ],
      });
    const md = markdownReport(
      [
        pass('learned', '2026-12-03T17:00:00.000Z', 40_000, '1.5'),
        pass('fixed', '2026-12-03T17:20:00.000Z', 42_000, '1.4'),
        pass('learned', '2026-12-03T18:00:00.000Z', 46_000, '2.5'),
        pass('fixed', '2026-12-03T17:40:00.000Z', 38_000, '1.2'),
      ],
      parseOptions(['--small', '1', '--large', '1'], '/out'),
      './dev bench cost --small 1 --large 1',
      'Alternating',
    );
    expect(md).toContain(
      '- batched, large merges per run, median over every pass: wall 43.0 s learned (2 runs) against 40.0 s fixed (2 runs); CPU used 43.0 against 40.0 s; cores requested 2.0 against 2.0.',
    );
    expect(md).toContain('| 3 | batched, fixed | 2026-12-03T17:40 | 1.2 | 1 | 38.0 | 38.0 |');
    expect(md).toContain('| 4 | batched, learned | 2026-12-03T18:00 | 2.5 | 1 | 46.0 | 46.0 |');
  });
});
