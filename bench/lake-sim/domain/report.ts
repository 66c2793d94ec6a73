/** The simulator's reports: markdown summary and an HTML page with charts. Pure: no I/O. */
import { applicationCosts, summarizeTasks } from './ledger.ts';
import type { DeleteRow, RunResult } from './result.ts';
import { finalSamples, invariants, totalsOverTime } from './result.ts';

const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const mib = (bytes: number): string => `${fmt(bytes / 2 ** 20, 2)} MiB`;

/** The delete-file checkpoint rows of one checkpoint label (`end` when present, else the last). */
function lastDeletes(rows: readonly DeleteRow[]): DeleteRow[] {
  const labels = [...new Set(rows.map((r) => r.checkpoint))];
  const label = labels.includes('end') ? 'end' : labels.at(-1);
  return rows.filter((r) => r.checkpoint === label);
}

function probeTotals(result: RunResult): Map<string, { scan: number; lookup: number }> {
  const out = new Map<string, { scan: number; lookup: number }>();
  for (const p of result.probes) {
    const row = out.get(p.checkpoint) ?? { scan: 0, lookup: 0 };
    if (p.query === 'full-scan') row.scan += p.ms ?? 0;
    else row.lookup += p.ms ?? 0;
    out.set(p.checkpoint, row);
  }
  return out;
}

/**
 * Each run's column label: its policy, with Icepack's resident-session bound when it was on
 * (ADR 0046), and the run's start when two runs would share a label (runs of several days
 * joined by `report`).
 */
export function runLabels(results: readonly RunResult[]): string[] {
  const base = results.map((r) =>
    r.policy === 'icepack' && (r.options.residentIdleSeconds ?? 0) > 0
      ? `icepack, sessions ${String(r.options.residentIdleSeconds)} s`
      : r.policy,
  );
  const dated = base.map((label, i) =>
    base.indexOf(label) === base.lastIndexOf(label)
      ? label
      : `${label} (${results[i]!.startedAt.slice(0, 16).replace('T', ' ')})`,
  );
  return dated.map((label, i) =>
    dated.indexOf(label) === dated.lastIndexOf(label) ? label : `${label} #${String(i + 1)}`,
  );
}

/** One line per figure, one column per policy. */
export function outcomeRows(results: readonly RunResult[]): [string, ...string[]][] {
  const col = (f: (r: RunResult) => string): string[] => results.map(f);
  const end = (r: RunResult) => [...finalSamples(r.samples).values()];
  const sum = (
    r: RunResult,
    k: 'dataFiles' | 'smallFiles' | 'deleteFiles' | 'snapshots' | 'metadataBytes',
  ) => end(r).reduce((n, s) => n + s[k], 0);
  const max = (r: RunResult, k: 'smallFiles' | 'snapshots') =>
    Math.max(0, ...end(r).map((s) => s[k]));
  return [
    ['writer commits', ...col((r) => fmt(r.writes.commits))],
    [
      'failed commit attempts (by error)',
      ...col(
        (r) =>
          `${fmt(r.writes.failures)} (${fmt((100 * r.writes.failures) / Math.max(1, r.writes.commits), 1)} %)` +
          (Object.keys(r.writes.failuresByError).length === 0
            ? ''
            : `: ${Object.entries(r.writes.failuresByError)
                .map(([k, v]) => `${k} ${String(v)}`)
                .join(', ')}`),
      ),
    ],
    [
      'writes given up / actions skipped',
      ...col((r) => `${fmt(r.writes.gaveUp)} / ${fmt(r.writes.skipped)}`),
    ],
    ['data files at end (all tables)', ...col((r) => fmt(sum(r, 'dataFiles')))],
    [
      'small files at end (all tables; worst table)',
      ...col((r) => `${fmt(sum(r, 'smallFiles'))} (${fmt(max(r, 'smallFiles'))})`),
    ],
    [
      'delete files at end: live / dangling (merge-on-read tables)',
      ...col((r) => {
        const d = lastDeletes(r.deletes);
        return `${fmt(d.reduce((n, x) => n + x.live, 0))} / ${fmt(d.reduce((n, x) => n + x.dangling, 0))}`;
      }),
    ],
    [
      'snapshots at end (all tables; worst table)',
      ...col((r) => `${fmt(sum(r, 'snapshots'))} (${fmt(max(r, 'snapshots'))})`),
    ],
    ['metadata at end', ...col((r) => mib(sum(r, 'metadataBytes')))],
    [
      "maintenance compute (core-seconds; Icepack: its runs and its resident sessions' idle tails)",
      ...col((r) => fmt(r.coreSeconds)),
    ],
    [
      "Icepack resident sessions' idle tails: sessions / core-s requested (in the compute above)",
      ...col((r) =>
        r.policy !== 'icepack' || r.sessionTails === undefined
          ? 'n/a'
          : `${fmt(r.sessionTails.sessions)} / ${fmt(r.sessionTails.coreSecondsRequested)}`,
      ),
    ],
    [
      "work in cron's terms: its tasks' or calls' own time × cores (core-s; Icepack: all tasks / without each Spark application's longest, where its session start is)",
      ...col((r) => {
        if (r.policy === 'cron') return fmt(r.coreSeconds);
        if (r.policy !== 'icepack' || r.taskTime === undefined) return 'n/a';
        const t = r.taskTime;
        return `${fmt(t.coreSeconds)} (${fmt(t.tasks)} tasks) / ${fmt(t.warmCoreSeconds)} (${fmt(t.warmTasks)} tasks)`;
      }),
    ],
    [
      'Icepack ledger: core-seconds used (CPU) / bytes read / bytes written',
      ...col((r) => {
        if (r.policy !== 'icepack') return 'n/a';
        const t = summarizeTasks(r.tasks);
        return `${fmt(t.coreSecondsUsed)} / ${mib(t.bytesRead)} / ${mib(t.bytesWritten)}`;
      }),
    ],
    [
      "Icepack compute by Spark application: applications (batches) / core-s requested of each one's costliest task (the session start is in it) / of the other tasks (per task)",
      ...col((r) => {
        if (r.policy !== 'icepack') return 'n/a';
        const a = applicationCosts(r.tasks);
        return `${fmt(a.applications)} (${fmt(a.batches)}) / ${fmt(a.startersRequested)} / ${fmt(a.othersRequested)} (${fmt(a.othersRequested / Math.max(1, a.others), 1)})`;
      }),
    ],
    [
      'maintenance runs',
      ...col((r) =>
        r.policy === 'icepack'
          ? `${fmt(r.tasks.length)} Spark runs: ${Object.entries(summarizeTasks(r.tasks).byOutcome)
              .map(([k, v]) => `${k} ${String(v)}`)
              .join(', ')}`
          : r.policy === 'cron'
            ? `${fmt(r.cron.length)} procedure calls, ${fmt(r.cron.filter((c) => !c.ok).length)} failed`
            : 'none',
      ),
    ],
    [
      'query probe at end: full scans / point lookups (ms, sum of 5 tables)',
      ...col((r) => {
        const p = probeTotals(r).get('end');
        return p === undefined ? 'n/a' : `${fmt(p.scan)} / ${fmt(p.lookup)}`;
      }),
    ],
  ];
}

/** One line per invariant, one column per policy. */
export function invariantRows(results: readonly RunResult[]): [string, ...string[]][] {
  const inv = results.map(invariants);
  return [
    ['wasted tasks (succeeded, changed nothing)', ...inv.map((i) => String(i.wasted.length))],
    ['duplicate Spark runs', ...inv.map((i) => String(i.duplicates.length))],
    [
      'data identical (refs checked: ok / all)',
      ...results.map(
        (r) => `${String(r.verify.filter((v) => v.ok).length)} / ${String(r.verify.length)}`,
      ),
    ],
    ['runs reported lost that wrote a result', ...results.map((r) => String(r.falseLosses.length))],
    ['task ids breaking the lifecycle', ...results.map((r) => String(r.lifecycle.length))],
  ];
}

function mdTable(head: readonly string[], rows: readonly (readonly string[])[]): string {
  return [
    `| ${head.join(' | ')} |`,
    `| ${head.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

/** Findings worth a person's attention: every broken invariant, listed. */
function findings(results: readonly RunResult[]): string[] {
  const out: string[] = [];
  const labels = runLabels(results);
  for (const [i, r] of results.entries()) {
    const label = labels[i]!;
    const inv = invariants(r);
    for (const t of inv.wasted) {
      out.push(
        `${label}: wasted ${t.type} on ${t.table} (run ${t.runId}): ${JSON.stringify(t.before)} → ${JSON.stringify(t.after)}`,
      );
    }
    for (const d of inv.duplicates) out.push(`${label}: duplicate run: ${d}`);
    for (const f of r.falseLosses) out.push(`${label}: false loss: ${f}`);
    for (const v of inv.data) {
      out.push(
        `${label}: data differs in ${v.table} ${v.ref}: expected ${String(v.expected.rows)} rows, read ${String(v.actual.rows)} (missing ${String(v.missing)}, extra ${String(v.extra)}, duplicated ${String(v.duplicated)}, changed ${String(v.changed)})`,
      );
    }
    if (!inv.verified) out.push(`${label}: the data was never read back (no verify lines)`);
    for (const l of r.lifecycle) out.push(`${label}: lifecycle: ${l}`);
    const open = r.tasks.filter((x) => x.outcome === 'running');
    if (open.length > 0) {
      out.push(
        `${label}: ${String(open.length)} run(s) still running when the data was checked (not judged): ${open.map((t) => `${t.type} ${t.table}`).join(', ')}`,
      );
    }
    for (const t of r.tasks.filter((x) => x.outcome === 'failed' || x.outcome === 'retrying')) {
      out.push(`${label}: ${t.outcome} ${t.type} on ${t.table} (run ${t.runId}): ${t.error ?? ''}`);
    }
  }
  return out;
}

export function markdownReport(results: readonly RunResult[], command: string): string {
  const first = results[0]!;
  const o = first.options;
  const labels = runLabels(results);
  const head = ['', ...labels];
  const lines = [
    `# Lake simulator — ${labels.join('; ')} — ${first.startedAt.slice(0, 10)}`,
    '',
    `Command: \`${command}\`. Workload: ${String(first.tables.length)} tables on ${o.storage === 's3' ? 'S3 (moto)' : 'local disk'}, seed ${String(o.seed)}, ${String(o.minutes)} min of writing at load ${String(o.load)}; snapshot retention ${String(o.retentionMinutes)} min (table property); cron every ${String(o.cronMinutes)} min; query probe every ${String(o.probeEveryMinutes)} min. How to read this: [docs/lake-sim.md](../../docs/lake-sim.md).`,
    '',
    ...results.map(
      (r, i) =>
        `- ${labels[i]!}: ${r.startedAt} → ${r.endedAt}, catalog \`${r.catalog}\`${r.policy === 'icepack' ? `; resident sessions ${(r.options.residentIdleSeconds ?? 0) > 0 ? `on (idle bound ${String(r.options.residentIdleSeconds)} s)` : 'off'}` : ''}`,
    ),
    '',
    '## Invariants',
    '',
    mdTable(head, invariantRows(results)),
    '',
    '## Outcome',
    '',
    mdTable(head, outcomeRows(results)),
    '',
    '## Findings',
    '',
    ...(findings(results).length === 0 ? ['None.'] : findings(results).map((f) => `- ${f}`)),
    '',
    '## Machine',
    '',
    '```',
    first.machine,
    '```',
    '',
  ];
  return lines.join('\n');
}

const COLORS: Record<string, string> = { none: '#9e9e9e', cron: '#e6862e', icepack: '#1f77b4' };
/** Further runs of a policy already shown get the next of these. */
const MORE_COLORS = ['#2ca02c', '#9467bd', '#d62728', '#8c564b'];

function runColors(results: readonly RunResult[]): string[] {
  let more = 0;
  return results.map((r, i) =>
    results.findIndex((x) => x.policy === r.policy) === i
      ? (COLORS[r.policy] ?? MORE_COLORS[more++ % MORE_COLORS.length]!)
      : MORE_COLORS[more++ % MORE_COLORS.length]!,
  );
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!,
  );
}

function htmlTable(head: readonly string[], rows: readonly (readonly string[])[]): string {
  return `<table><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr>${rows
    .map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`)
    .join('')}</table>`;
}

/** The chart specs (Chart.js configurations) of the HTML report. */
export function chartSpecs(
  results: readonly RunResult[],
): { id: string; title: string; config: unknown }[] {
  const labels = runLabels(results);
  const colors = runColors(results);
  const line = (
    key: 'dataFiles' | 'smallFiles' | 'deleteFiles' | 'snapshots' | 'metadataBytes',
    title: string,
  ) => ({
    id: key,
    title,
    config: {
      type: 'line',
      data: {
        datasets: results.map((r, i) => ({
          label: labels[i],
          borderColor: colors[i],
          pointRadius: 0,
          data: totalsOverTime(r.samples).map((s) => ({ x: s.t / 60, y: s[key] })),
        })),
      },
      options: {
        animation: false,
        scales: {
          x: { type: 'linear', title: { display: true, text: 'minutes' } },
          y: { beginAtZero: true },
        },
      },
    },
  });
  const checkpoints = [...new Set(results.flatMap((r) => [...probeTotals(r).keys()]))];
  return [
    line('dataFiles', 'Data files, all tables'),
    line('smallFiles', 'Small files, all tables'),
    line('deleteFiles', 'Delete files, all tables'),
    line('snapshots', 'Snapshots, all tables'),
    line('metadataBytes', 'Metadata bytes, all tables'),
    {
      id: 'compute',
      title: 'Maintenance compute (core-seconds)',
      config: {
        type: 'bar',
        data: {
          labels,
          datasets: [
            {
              label: 'core-seconds',
              backgroundColor: colors,
              data: results.map((r) => Math.round(r.coreSeconds)),
            },
          ],
        },
        options: { animation: false, plugins: { legend: { display: false } } },
      },
    },
    ...(['full-scan', 'point-lookup'] as const).map((query) => ({
      id: `probe-${query}`,
      title: `Query probe: ${query} (ms, sum over 5 tables) at each checkpoint`,
      config: {
        type: 'bar',
        data: {
          labels: checkpoints,
          datasets: results.map((r, i) => ({
            label: labels[i],
            backgroundColor: colors[i],
            data: checkpoints.map((c) => {
              const p = probeTotals(r).get(c);
              return p === undefined ? null : query === 'full-scan' ? p.scan : p.lookup;
            }),
          })),
        },
        options: { animation: false },
      },
    })),
  ];
}

/** A self-contained page: `chartJs` is Chart.js's UMD build, inlined so it opens offline. */
export function htmlReport(
  results: readonly RunResult[],
  markdown: string,
  chartJs: string,
): string {
  const labels = runLabels(results);
  const head = ['', ...labels];
  const charts = chartSpecs(results);
  const perTable = results.map((r, i) => {
    const end = finalSamples(r.samples);
    return `<h3>${escapeHtml(labels[i]!)}: each table at the end</h3>${htmlTable(
      [
        'table',
        'kind',
        'commits',
        'failed attempts',
        'data files',
        'small',
        'delete files',
        'snapshots',
        'metadata',
      ],
      r.tables.map((t) => {
        const s = end.get(t.name);
        const w = r.writes.perTable[t.name];
        return [
          t.name,
          t.kind,
          String(w?.commits ?? ''),
          String(w?.failures ?? ''),
          String(s?.dataFiles ?? ''),
          String(s?.smallFiles ?? ''),
          String(s?.deleteFiles ?? ''),
          String(s?.snapshots ?? ''),
          s === undefined ? '' : mib(s.metadataBytes),
        ];
      }),
    )}`;
  });
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Lake simulator ${escapeHtml(labels.join('; '))}</title>
<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}.chart{width:100%;max-width:1000px;margin:1em 0}pre{background:#f6f6f6;padding:1em;overflow:auto}</style>
<script>${chartJs.replace(/<\/script/gi, '<\\/script')}</script></head><body>
<h1>Lake simulator: ${escapeHtml(labels.join('; '))}</h1>
<h2>Invariants</h2>${htmlTable(head, invariantRows(results))}
<h2>Outcome</h2>${htmlTable(head, outcomeRows(results))}
<h2>Over time</h2>
${charts.map((c) => `<h3>${escapeHtml(c.title)}</h3><div class="chart"><canvas id="${c.id}"></canvas></div>`).join('\n')}
${perTable.join('\n')}
<h2>Summary (markdown)</h2><pre>${escapeHtml(markdown)}</pre>
<script>
const specs = ${JSON.stringify(Object.fromEntries(charts.map((c) => [c.id, c.config])))};
for (const [id, config] of Object.entries(specs)) new Chart(document.getElementById(id), config);
</script>
</body></html>
`;
}
