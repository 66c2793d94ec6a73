/**
 * The cost benchmark's Markdown report (bench/results/cost-<date>.md). Pure: no I/O.
 */
import type { CostOptions } from './options.ts';
import {
  classCost,
  extrapolate,
  largeMerges,
  maintainedTables,
  meanLoad,
  perTaskSaving,
  problems,
} from './summary.ts';
import type { ClassCost, CostRun, SizeClass } from './summary.ts';

const s = (ms: number): string => (ms / 1000).toFixed(0);
const f1 = (n: number): string => n.toFixed(1);
const kv = (o: Readonly<Record<string, number>>): string =>
  Object.entries(o)
    .map(([k, v]) => `${k} ${String(v)}`)
    .join(', ') || '—';

function classRow(name: string, size: SizeClass, c: ClassCost): string {
  return [
    name,
    size,
    String(c.tables),
    String(c.runs),
    kv(c.byType),
    kv(c.byOutcome),
    f1(c.coreSecondsRequested),
    `${f1(c.coreSecondsUsed)} (${String(c.runsWithUsed)} runs)`,
    c.perRun === undefined ? '—' : f1(c.perRun.requested),
    c.perRun?.used === undefined ? '—' : f1(c.perRun.used),
    String(c.killedForMemory),
    s(c.spanMs),
  ].join(' | ');
}

export function markdownReport(
  runs: readonly CostRun[],
  options: CostOptions,
  command: string,
  heading: string,
): string {
  const out: string[] = [];
  const name = (r: CostRun) => `${r.mode}, ${r.sizing}`;
  out.push(`# ${heading}`, '', `\`${command}\``, '');
  out.push('```', runs[0]?.machine ?? '', `started: ${runs[0]?.startedAt ?? ''}`, '```', '');
  out.push(
    `Tables: ${String(options.small)} small (3 commits of 3 files of 500 rows: 9 files, ~0.3 MB, 3 snapshots) and ${String(options.large)} large (${String(options.largeMb)} MB in ${String(options.largeFiles)} files, 6 commits); the single mode maintains the first ${String(Math.min(options.small, options.singleSmall))} small tables. Sizes as read are below. Each mode runs on its own private Redis, Kafka and REST catalog with the four services at their defaults (dispatcher: one slot of 1 driver + 1 executor core); core-seconds are the ledger's (\`cost\` of each succeeded task event: requested = cores × run time, used = the job's CPU).`,
    '',
  );
  out.push(
    '| mode, sizing | tables | count | runs | by type | by outcome | core-s requested | core-s used | requested per run | used per run | killed for memory | span s |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  );
  for (const r of runs) {
    for (const size of ['small', 'large'] as const) {
      out.push(`| ${classRow(name(r), size, classCost(r, size))} |`);
    }
  }
  out.push(
    '',
    '| mode, sizing | created in s | maintained in s | drained | tables maintained | data identical | problems |',
    '|---|---|---|---|---|---|---|',
  );
  for (const r of runs) {
    const p = problems(r);
    out.push(
      `| ${name(r)} | ${f1(r.createSeconds)} | ${s(r.maintainMs)} | ${r.drained ? 'yes' : 'no'} | ${String(maintainedTables(r.tables))} of ${String(r.tables.length)} | ${p.some((x) => x.includes('rows (checksum')) || p.some((x) => x.includes('not read')) ? '**no**' : 'yes'} | ${p.length === 0 ? 'none' : p.join('; ')} |`,
    );
  }
  out.push('', '## Batched against one application per task (small-table tasks, per task)', '');
  for (const sizing of new Set(runs.map((r) => r.sizing))) {
    const batched = runs.find((r) => r.mode === 'batched' && r.sizing === sizing);
    const single = runs.find((r) => r.mode === 'single' && r.sizing === sizing);
    if (batched === undefined || single === undefined) continue;
    const b = classCost(batched, 'small');
    const u = classCost(single, 'small');
    const saving = perTaskSaving(u, b);
    out.push(
      `- ${sizing} sizing: ${saving === undefined ? 'no comparable runs' : `batched costs **${saving.factor.toFixed(1)}× fewer** core-seconds ${saving.by} per small-table task (target ≥ 5×)`}.` +
        (u.perRun === undefined || b.runs === 0
          ? ''
          : ` Extrapolated per task (not measured): the ${String(b.runs)} small-table task runs of the batched mode, one application each, would have cost ~${f1(extrapolate(u.perRun.used ?? u.perRun.requested, b.runs))} core-seconds ${u.perRun.used === undefined ? 'requested' : 'used'} against the ${f1(u.perRun.used === undefined ? b.coreSecondsRequested : b.coreSecondsUsed)} measured.`),
    );
  }
  out.push('', '## Learned against fixed-constant sizing (large-table tasks)', '');
  for (const mode of new Set(runs.map((r) => r.mode))) {
    const learned = runs.filter((r) => r.mode === mode && r.sizing === 'learned');
    const fixed = runs.filter((r) => r.mode === mode && r.sizing === 'fixed');
    if (learned.length === 0 || fixed.length === 0) continue;
    const sum = (rs: CostRun[], f: (c: ClassCost) => number) =>
      rs.reduce((n, r) => n + f(classCost(r, 'large')), 0);
    const passes = (rs: CostRun[]) => (rs.length === 1 ? '' : ` (${String(rs.length)} passes)`);
    out.push(
      `- ${mode}: large-table span ${s(sum(learned, (c) => c.spanMs))} s learned${passes(learned)} against ${s(sum(fixed, (c) => c.spanMs))} s fixed${passes(fixed)}; core-seconds requested ${f1(sum(learned, (c) => c.coreSecondsRequested))} against ${f1(sum(fixed, (c) => c.coreSecondsRequested))}; killed for memory ${String(sum(learned, (c) => c.killedForMemory))} against ${String(sum(fixed, (c) => c.killedForMemory))}.`,
    );
    const l = largeMerges(learned);
    const x = largeMerges(fixed);
    const opt = (n: number | undefined) => (n === undefined ? '—' : f1(n));
    out.push(
      `- ${mode}, large merges per run, median over every pass: wall ${opt(l.medianRunSeconds)} s learned (${String(l.runs)} runs) against ${opt(x.medianRunSeconds)} s fixed (${String(x.runs)} runs); CPU used ${opt(l.medianCpuSeconds)} against ${opt(x.medianCpuSeconds)} s; cores requested ${opt(l.medianCores)} against ${opt(x.medianCores)}.`,
    );
  }
  if (runs.length > 2) {
    out.push(
      '',
      'Each pass in the order it ran (the passes alternate so that learned and fixed see the same machine):',
      '',
      '| pass | mode, sizing | started | mean 1-min load | large merges | median wall s | median CPU s |',
      '|---|---|---|---|---|---|---|',
    );
    [...runs]
      .sort((a, b) => a.startedAt.localeCompare(b.startedAt))
      .forEach((r, i) => {
        const m = largeMerges([r]);
        const load = meanLoad(r);
        out.push(
          `| ${String(i + 1)} | ${name(r)} | ${r.startedAt.slice(0, 16)} | ${load === undefined ? '—' : load.toFixed(1)} | ${String(m.runs)} | ${m.medianRunSeconds === undefined ? '—' : f1(m.medianRunSeconds)} | ${m.medianCpuSeconds === undefined ? '—' : f1(m.medianCpuSeconds)} |`,
        );
      });
  }
  out.push(
    '',
    'Each mode starts from an empty sizing history, so the learned model starts at its prior (ADR 0026) and moves only with runs of at least 256 MiB recorded during the run itself.',
    '',
    '## Sizing model published at the end',
    '',
  );
  for (const r of runs) {
    out.push(`- ${name(r)}: \`${r.model === undefined ? 'none' : JSON.stringify(r.model)}\``);
  }
  out.push('', '## Tables (before → after: rows, data files, bytes, snapshots)', '');
  out.push(
    '| mode, sizing | table | rows | files | bytes | snapshots | checksum equal |',
    '|---|---|---|---|---|---|---|',
  );
  for (const r of runs) {
    const shown = [
      ...r.tables.filter((t) => t.size === 'small').slice(0, 3),
      ...r.tables.filter((t) => t.size === 'large'),
    ];
    for (const t of shown) {
      const a = t.after;
      out.push(
        `| ${name(r)} | ${t.table} | ${String(t.before.rows)} → ${a === undefined ? '?' : String(a.rows)} | ${String(t.before.dataFiles)} → ${a === undefined ? '?' : String(a.dataFiles)} | ${String(t.before.bytes)} → ${a === undefined ? '?' : String(a.bytes)} | ${String(t.before.snapshots)} → ${a === undefined ? '?' : String(a.snapshots)} | ${a !== undefined && a.checksum === t.before.checksum && a.rows === t.before.rows ? 'yes' : 'no'} |`,
      );
    }
  }
  out.push('', '## Task runs', '');
  out.push(
    '| mode, sizing | table | type | run | outcome | run s | core-s requested | core-s used | error |',
    '|---|---|---|---|---|---|---|---|---|',
  );
  for (const r of runs) {
    for (const row of r.rows) {
      out.push(
        `| ${name(r)} | ${row.table} | ${row.type} | ${row.runId} | ${row.outcome} | ${row.runMs === undefined ? '—' : s(row.runMs)} | ${row.coreSecondsRequested === undefined ? '—' : f1(row.coreSecondsRequested)} | ${row.coreSecondsUsed === undefined ? '—' : f1(row.coreSecondsUsed)} | ${(row.error ?? '').replaceAll('|', '/').slice(0, 160)} |`,
      );
    }
  }
  return `${out.join('\n')}\n`;
}
