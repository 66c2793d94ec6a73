/// <reference lib="dom" />
/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-argument,
   @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return,
   @typescript-eslint/no-explicit-any --
   the pages read the console API's JSON, whose shape its contract test (console.int.test.ts) pins. */
// The console's front end: Preact + htm, Chart.js; bundled by esbuild when the planner
// starts (console-assets.ts) and served by it, so nothing loads from a CDN.
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  Tooltip,
} from 'chart.js';
import { html } from 'htm/preact';
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

const TOKEN_KEY = 'icepack-console-token';
type Json = Record<string, any>;

class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

async function api(path: string, init: RequestInit = {}): Promise<Json> {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const res = await fetch(`/console/api${path}`, {
    ...init,
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
  const body = (await res.json().catch(() => ({}))) as Json;
  if (!res.ok) throw new ApiError(res.status, String(body.message ?? res.statusText));
  return body;
}

/** Loads `path` and re-loads when `deps` change; the page shows loading, error or data. */
function useApi(path: string | null, deps: unknown[] = []) {
  const [state, setState] = useState<{ data?: Json; error?: ApiError; loading: boolean }>({
    loading: true,
  });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (path === null) return;
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    api(path).then(
      (data) => live && setState({ data, loading: false }),
      (error: ApiError) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [path, tick, ...deps]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

const fmtBytes = (n: number) =>
  n >= 2 ** 30
    ? `${(n / 2 ** 30).toFixed(1)} GiB`
    : n >= 2 ** 20
      ? `${(n / 2 ** 20).toFixed(1)} MiB`
      : n >= 1024
        ? `${(n / 1024).toFixed(1)} KiB`
        : `${n} B`;
const fmtAge = (ms: number) =>
  ms < 60_000
    ? `${Math.round(ms / 1000)} s`
    : ms < 3_600_000
      ? `${Math.round(ms / 60_000)} min`
      : `${(ms / 3_600_000).toFixed(1)} h`;
const fmtTime = (iso?: string) =>
  iso === undefined || iso === '' ? '—' : new Date(iso).toLocaleString();
const tableHref = (key: string) => `#/table/${encodeURIComponent(key)}`;
/** A history cell: `before → after` of a figure, else what the run removed, else a dash. */
const change = (x: Json, figure: string, removed: number | undefined) =>
  x.before !== undefined && x.after !== undefined
    ? `${x.before[figure]} → ${x.after[figure]}`
    : removed === undefined
      ? '—'
      : `−${removed}`;
/** The task types that have succeeded on a table (overview row), in a fixed order. */
const maintained = (t: Json) =>
  (['cleanup', 'merge', 'sort'] as const).filter((type) => t.lastMaintenance[type] !== undefined);
const fmtCores = (millicores: number) => `${Number((millicores / 1000).toFixed(1))}`;
/** A resource group's use, e.g. `cpu 3 / 8 cores · memory 6.0 GiB / 32.0 GiB`. */
const fmtQuota = (q: Json) =>
  `cpu ${fmtCores(q.cpu.usedMillicores)}${q.cpu.hardMillicores === undefined ? '' : ` / ${fmtCores(q.cpu.hardMillicores)}`} cores · memory ${fmtBytes(q.memory.usedBytes)}${q.memory.hardBytes === undefined ? '' : ` / ${fmtBytes(q.memory.hardBytes)}`}`;

function Status({ loading, error, empty, children }: Json) {
  if (error !== undefined)
    return html`<p class="error" role="alert">
      Could not load: ${error.message}${error.status === 401 ? ' — sign in again.' : ''}
    </p>`;
  if (loading) return html`<p class="loading" aria-busy="true">Loading…</p>`;
  if (empty) return html`<p class="empty">${empty}</p>`;
  return children;
}

function Login({ onDone, error }: { onDone: () => void; error?: string }) {
  const [token, setToken] = useState('');
  return html`<form
    class="login"
    onSubmit=${(e: Event) => {
      e.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, token);
      onDone();
    }}
  >
    <h1>Icepack console</h1>
    ${error === undefined ? null : html`<p class="error" role="alert">${error}</p>`}
    <label
      >API token
      <input
        id="token"
        type="password"
        autofocus
        value=${token}
        onInput=${(e: Event) => setToken((e.target as HTMLInputElement).value)}
    /></label>
    <button type="submit">Sign in</button>
  </form>`;
}

const COLUMNS: [string, string][] = [
  ['table', 'Table'],
  ['smallFiles', 'Small files'],
  ['deleteFiles', 'Delete files'],
  ['snapshots', 'Snapshots'],
  ['bytes', 'Data'],
  ['lastMaintenance', 'Last maintenance (per type)'],
];

function Overview() {
  const [q, setQ] = useState('');
  const [catalog, setCatalog] = useState('');
  const [sort, setSort] = useState({ key: 'smallFiles', dir: 'desc' });
  const [page, setPage] = useState(1);
  const params = new URLSearchParams({
    sort: sort.key,
    dir: sort.dir,
    page: String(page),
    pageSize: '25',
  });
  if (q !== '') params.set('q', q);
  if (catalog !== '') params.set('catalog', catalog);
  const r = useApi(`/overview?${params}`);
  const d = r.data;
  const sortBy = (key: string) => {
    setSort((s) => ({
      key,
      dir:
        s.key === key && s.dir === 'desc'
          ? 'asc'
          : key === 'table' && s.key !== key
            ? 'asc'
            : 'desc',
    }));
    setPage(1);
  };
  return html`<section>
    <h1>Overview</h1>
    <h2>Catalogs</h2>
    <${Status}
      loading=${r.loading && d === undefined}
      error=${r.error}
      empty=${d !== undefined && d.catalogs.length === 0 ? 'No catalogs yet: the planner has seen no table state.' : undefined}
    >
      <table class="catalogs">
        <thead>
          <tr>
            <th>Catalog</th>
            <th>Tables</th>
            <th>Waiting</th>
            <th>Running</th>
            <th>Resource group</th>
            <th>Quota use</th>
            <th>State</th>
          </tr>
        </thead>
        <tbody>
          ${(d?.catalogs ?? []).map(
            (c: Json) =>
              html`<tr>
                <td><a href=${`#/queue/${encodeURIComponent(c.name)}`}>${c.name}</a></td>
                <td>${c.tables}</td>
                <td>${c.waiting}</td>
                <td>${c.running}</td>
                <td>${c.quota === null ? '—' : c.quota.group}</td>
                <td
                  class="quota"
                  title=${c.quota === null ? 'no dispatcher reports this catalog now' : `${c.quota.source}, as of ${fmtTime(c.quota.at)}`}
                >
                  ${c.quota === null ? 'unknown' : fmtQuota(c.quota)}
                </td>
                <td>
                  ${c.paused === null ? 'active' : html`<span class="paused">paused by ${c.paused.by}</span>`}
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
    <//>
    <h2>Tables</h2>
    <div class="filters">
      <label
        >Filter
        <input
          id="filter"
          type="search"
          value=${q}
          placeholder="catalog/namespace/table"
          onInput=${(e: Event) => {
            setQ((e.target as HTMLInputElement).value);
            setPage(1);
          }}
      /></label>
      <label
        >Catalog
        <select
          id="catalog"
          value=${catalog}
          onChange=${(e: Event) => {
            setCatalog((e.target as HTMLSelectElement).value);
            setPage(1);
          }}
        >
          <option value="">all</option>
          ${(d?.catalogs ?? []).map((c: Json) => html`<option value=${c.name}>${c.name}</option>`)}
        </select></label
      >
    </div>
    <${Status}
      loading=${r.loading && d === undefined}
      error=${r.error}
      empty=${d !== undefined && d.total === 0 ? 'No table matches.' : undefined}
    >
      <table class="tables" aria-busy=${r.loading}>
        <thead>
          <tr>
            ${COLUMNS.map(
              ([key, label]) =>
                html`<th
                  aria-sort=${sort.key === key ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}
                >
                  <button class="sort" onClick=${() => sortBy(key)}>
                    ${label}${sort.key === key ? (sort.dir === 'asc' ? ' ▲' : ' ▼') : ''}
                  </button>
                </th>`,
            )}
            <th>State</th>
          </tr>
        </thead>
        <tbody>
          ${(d?.rows ?? []).map(
            (t: Json) =>
              html`<tr>
                <td><a href=${tableHref(t.tableKey)}>${t.tableKey}</a></td>
                <td>${t.smallFiles}</td>
                <td>${t.deleteFiles}</td>
                <td>${t.snapshots}</td>
                <td>${fmtBytes(t.bytes)}</td>
                <td class="last-maintenance">
                  ${
                    maintained(t).length === 0
                      ? 'never'
                      : maintained(t).map(
                          (type) => html`<div>${type} ${fmtTime(t.lastMaintenance[type])}</div>`,
                        )
                  }
                </td>
                <td>${t.paused === null ? 'active' : html`<span class="paused">paused</span>`}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      <nav class="pager" aria-label="pages">
        <button disabled=${page <= 1} onClick=${() => setPage(page - 1)}>Previous</button>
        <span>Page ${d?.page} of ${d?.pages} (${d?.total} tables)</span>
        <button disabled=${d === undefined || page >= d.pages} onClick=${() => setPage(page + 1)}>
          Next
        </button>
      </nav>
    <//>
  </section>`;
}

/** A ledger entry's kind for people: its task type, or a resident session's idle tail (ADR 0046). */
function entryWhat(e: Json): string {
  return e.kind === 'session-tail' ? `session idle (after ${String(e.taskType)})` : e.taskType;
}

function LedgerChart({ entries }: { entries: Json[] }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (canvas.current === null) return;
    const rows = entries.toReversed();
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: {
        labels: rows.map((e) => `${new Date(e.at).toLocaleString()} ${entryWhat(e)}`),
        datasets: [
          {
            label: 'core-seconds requested (cost)',
            data: rows.map((e) => e.cost?.coreSecondsRequested ?? 0),
            yAxisID: 'cost',
            backgroundColor: '#c0504d',
          },
          {
            label: 'files removed (benefit)',
            data: rows.map(
              (e) =>
                (e.benefit?.dataFilesRemoved ?? 0) +
                (e.benefit?.deleteFilesRemoved ?? 0) +
                (e.benefit?.snapshotsRemoved ?? 0),
            ),
            yAxisID: 'benefit',
            backgroundColor: '#4f81bd',
          },
        ],
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        scales: {
          cost: { position: 'left', beginAtZero: true },
          benefit: { position: 'right', beginAtZero: true },
        },
      },
    });
    return () => chart.destroy();
  }, [entries]);
  return html`<div class="chart">
    <canvas ref=${canvas} role="img" aria-label="benefit against cost per run"></canvas>
  </div>`;
}

function TablePage({ tableKey }: { tableKey: string }) {
  const r = useApi(`/tables/${encodeURIComponent(tableKey)}`);
  const [acting, setActing] = useState<string | undefined>();
  const d = r.data;
  const act = async (path: string) => {
    setActing(undefined);
    try {
      const out = await api(`/tables/${encodeURIComponent(tableKey)}${path}`, { method: 'POST' });
      setActing(`${out.action}: ${out.outcome}`);
    } catch (error) {
      setActing(`failed: ${(error as Error).message}`);
    }
    r.reload();
  };
  const s = d?.summary;
  const e = d?.explanation;
  return html`<section>
    <h1>${tableKey}</h1>
    <${Status} loading=${r.loading && d === undefined} error=${r.error}>
      ${
        d === undefined
          ? null
          : html`
              <p
                id="pause-state"
                class=${d.consolePause !== null || d.catalogPause !== null ? 'paused' : 'active'}
                role="status"
              >
                ${
                  d.consolePause !== null
                    ? `Paused from the console by ${d.consolePause.by} at ${fmtTime(d.consolePause.at)}: the planner plans no tasks for this table.`
                    : d.catalogPause !== null
                      ? `Catalog paused from the console by ${d.catalogPause.by}: the planner plans no tasks for it.`
                      : e?.paused
                        ? `Paused by icepack.enabled=false on the ${e.pausedBy}.`
                        : 'Active: the planner plans this table.'
                }
              </p>
              <div class="actions">
                ${
                  d.consolePause === null
                    ? html`<button id="pause" onClick=${() => act('/pause')}>Pause table</button>`
                    : html`<button id="resume" onClick=${() => act('/resume')}>
                        Resume table
                      </button>`
                }
                ${acting === undefined ? null : html`<span role="status">${acting}</span>`}
              </div>
              <h2>Health</h2>
              <dl class="health">
                <dt>Data files</dt>
                <dd>${s.dataFiles}</dd>
                <dt>Small files</dt>
                <dd>${s.smallFiles}</dd>
                <dt>Delete files</dt>
                <dd>${s.deleteFiles}</dd>
                <dt>Snapshots</dt>
                <dd>${s.snapshots}</dd>
                <dt>Data</dt>
                <dd>${fmtBytes(s.bytes)}</dd>
                <dt>Scanned</dt>
                <dd>${fmtTime(s.scannedAt)}</dd>
                <dt>Last cleanup</dt>
                <dd>${fmtTime(e?.state.lastMaintenance.cleanup)}</dd>
                <dt>Last merge</dt>
                <dd>${fmtTime(e?.state.lastMaintenance.merge)}</dd>
                <dt>Last sort</dt>
                <dd>${fmtTime(e?.state.lastMaintenance.sort)}</dd>
              </dl>
              <h2>Partitions (worst first)</h2>
              ${
                d.partitions.length === 0
                  ? html`<p class="empty">Unpartitioned, or no partition figures.</p>`
                  : html`<table class="partitions">
                      <thead>
                        <tr>
                          <th>Partition</th>
                          <th>Data files</th>
                          <th>Small files</th>
                          <th>Delete files</th>
                          <th>Data</th>
                        </tr>
                      </thead>
                      <tbody>
                        ${d.partitions.map(
                          (p: Json) =>
                            html`<tr>
                              <td>
                                ${Object.entries(p.partition)
                                  .map(([k, v]) => `${k}=${String(v)}`)
                                  .join(', ')}
                              </td>
                              <td>${p.dataFiles}</td>
                              <td class=${p.smallFiles > 0 ? 'hot' : ''}>${p.smallFiles}</td>
                              <td class=${p.deleteFiles > 0 ? 'hot' : ''}>${p.deleteFiles}</td>
                              <td>${fmtBytes(p.bytes)}</td>
                            </tr>`,
                        )}
                      </tbody>
                    </table>`
              }
              <h2>Plan explanation</h2>
              ${(e?.decisions ?? []).map(
                (x: Json) =>
                  html`<article class="decision">
                    <h3>
                      ${x.type}: ${x.action}${x.pending !== 'missing' ? ` (task ${x.pending})` : ''}
                    </h3>
                    ${x.reason === undefined ? null : html`<p>${x.reason}</p>`}
                    <div class="cols">
                      <div>
                        <h4>Fired</h4>
                        <ul>
                          ${x.fired.map((f: string) => html`<li>${f}</li>`)}
                        </ul>
                      </div>
                      <div>
                        <h4>Not fired / why waiting</h4>
                        <ul>
                          ${x.notFired.map((f: string) => html`<li>${f}</li>`)}
                        </ul>
                      </div>
                    </div>
                    ${x.score === undefined ? null : html`<p>Score ${x.score.total}: ${x.score.parts.map((p: Json) => `${p.factor} ${p.points}`).join(', ')}</p>`}
                  </article>`,
              )}
              <h2>Task history: benefit against cost (30 days)</h2>
              ${
                d.ledger === null || d.ledger.entries.length === 0
                  ? html`<p class="empty">No succeeded run recorded for this table yet.</p>`
                  : html`<${LedgerChart} entries=${d.ledger.entries} />
                      <table class="history">
                        <thead>
                          <tr>
                            <th>When</th>
                            <th>Type</th>
                            <th>Run time</th>
                            <th>Core-s</th>
                            <th>Data files</th>
                            <th>Delete files</th>
                            <th>Snapshots</th>
                            <th>Bytes</th>
                          </tr>
                        </thead>
                        <tbody>
                          ${d.ledger.entries.map(
                            (x: Json) =>
                              html`<tr>
                                <td>${fmtTime(x.at)}</td>
                                <td>${entryWhat(x)}</td>
                                <td>${x.cost === undefined ? '—' : fmtAge(x.cost.runMs)}</td>
                                <td>${x.cost?.coreSecondsRequested ?? '—'}</td>
                                <td>${change(x, 'dataFiles', x.benefit?.dataFilesRemoved)}</td>
                                <td>${change(x, 'deleteFiles', x.benefit?.deleteFilesRemoved)}</td>
                                <td>${change(x, 'snapshots', x.benefit?.snapshotsRemoved)}</td>
                                <td>
                                  ${x.before === undefined || x.after === undefined ? '—' : `${fmtBytes(x.before.bytes)} → ${fmtBytes(x.after.bytes)}`}
                                </td>
                              </tr>`,
                          )}
                        </tbody>
                      </table>`
              }
            `
      }
    <//>
  </section>`;
}

function QueuePage({ catalog }: { catalog: string }) {
  const r = useApi(`/catalogs/${encodeURIComponent(catalog)}/queue`);
  const [acting, setActing] = useState<string | undefined>();
  const d = r.data;
  const act = async (w: Json, what: 'run-now' | 'cancel') => {
    setActing(undefined);
    try {
      const out = await api(`/tables/${encodeURIComponent(w.tableKey)}/tasks/${w.type}/${what}`, {
        method: 'POST',
      });
      setActing(`${out.action} ${out.target}: ${out.outcome}`);
    } catch (error) {
      setActing(`failed: ${(error as Error).message}`);
    }
    r.reload();
  };
  return html`<section>
    <h1>Queue of ${catalog}</h1>
    <${Status} loading=${r.loading && d === undefined} error=${r.error}>
      ${
        d === undefined
          ? null
          : html`
              <p>
                BullMQ queue <code>${d.queue}</code>. <button onClick=${r.reload}>Refresh</button>
                ${acting === undefined ? null : html` <span id="queue-action" role="status">${acting}</span>`}
              </p>
              <h2>Waiting, in run order</h2>
              ${
                d.waiting.length === 0
                  ? html`<p class="empty">No task waits.</p>`
                  : html`<table class="waiting">
                      <thead>
                        <tr>
                          <th>#</th>
                          <th>Task</th>
                          <th>Table</th>
                          <th>Score</th>
                          <th>Priority</th>
                          <th>Waiting</th>
                          <th>Actions</th>
                        </tr>
                      </thead>
                      <tbody>
                        ${d.waiting.map(
                          (w: Json) =>
                            html`<tr class=${w.runNow ? 'run-now' : ''}>
                              <td>
                                ${w.position}${w.runNow ? html` <span class="badge">run now</span>` : null}
                              </td>
                              <td>${w.type}</td>
                              <td><a href=${tableHref(w.tableKey)}>${w.tableKey}</a></td>
                              <td
                                title=${w.score.parts.map((p: Json) => `${p.factor} ${p.points}`).join(', ')}
                              >
                                ${w.score.total}
                              </td>
                              <td>${w.priority}</td>
                              <td>${fmtAge(w.waitingMs)}</td>
                              <td class="row-actions">
                                ${
                                  w.runNow
                                    ? null
                                    : html`<button
                                        class="run-now"
                                        aria-label=${`Run ${w.id} now`}
                                        onClick=${() => act(w, 'run-now')}
                                      >
                                        Run now
                                      </button>`
                                }
                                <button
                                  class="cancel"
                                  aria-label=${`Cancel ${w.id}`}
                                  onClick=${() => act(w, 'cancel')}
                                >
                                  Cancel
                                </button>
                              </td>
                            </tr>`,
                        )}
                      </tbody>
                    </table>`
              }
              <h2>Running</h2>
              ${
                d.running.length === 0
                  ? html`<p class="empty">No task runs.</p>`
                  : html`<table class="running">
                      <thead>
                        <tr>
                          <th>Task</th>
                          <th>Table</th>
                          <th>Started</th>
                          <th>Attempt</th>
                          <th>Run</th>
                          <th>Logs</th>
                        </tr>
                      </thead>
                      <tbody>
                        ${d.running.map(
                          (w: Json) =>
                            html`<tr>
                              <td>${w.type}</td>
                              <td><a href=${tableHref(w.tableKey)}>${w.tableKey}</a></td>
                              <td>${fmtTime(w.startedAt ?? undefined)}</td>
                              <td>${w.attempt}</td>
                              <td class="run">
                                ${
                                  w.run === null
                                    ? '—'
                                    : w.run.application === undefined
                                      ? `${w.run.runner} run ${w.run.runId}`
                                      : `SparkApplication ${w.run.application.namespace}/${w.run.application.name}`
                                }
                              </td>
                              <td class="logs">
                                ${w.run === null ? '—' : w.run.logs.map((l: string) => html`<code>${l}</code> `)}
                              </td>
                            </tr>`,
                        )}
                      </tbody>
                    </table>`
              }
              <h2>Recent failures</h2>
              ${
                d.failures.length === 0
                  ? html`<p class="empty">No recent failure.</p>`
                  : html`<table class="failures">
                      <thead>
                        <tr>
                          <th>When</th>
                          <th>Task</th>
                          <th>Table</th>
                          <th>Reason</th>
                        </tr>
                      </thead>
                      <tbody>
                        ${d.failures.map(
                          (f: Json) =>
                            html`<tr>
                              <td>${fmtTime(f.at)}</td>
                              <td>${f.type}</td>
                              <td><a href=${tableHref(f.tableKey)}>${f.tableKey}</a></td>
                              <td>${f.reason}</td>
                            </tr>`,
                        )}
                      </tbody>
                    </table>`
              }
            `
      }
    <//>
  </section>`;
}

function route():
  { page: 'overview' } | { page: 'table'; key: string } | { page: 'queue'; catalog: string } {
  const [, page, arg] = location.hash.split('/');
  if (page === 'table' && arg !== undefined) return { page: 'table', key: decodeURIComponent(arg) };
  if (page === 'queue' && arg !== undefined)
    return { page: 'queue', catalog: decodeURIComponent(arg) };
  return { page: 'overview' };
}

function App() {
  const [where, setWhere] = useState(route());
  const [signedIn, setSignedIn] = useState(0);
  const me = useApi('/me', [signedIn]);
  useEffect(() => {
    const on = () => setWhere(route());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  useEffect(() => {
    document.querySelector<HTMLElement>('main h1')?.focus();
  }, [where]);
  if (me.loading && me.data === undefined)
    return html`<p class="loading" aria-busy="true">Loading…</p>`;
  if (me.error !== undefined)
    return html`<${Login}
      onDone=${() => setSignedIn((n) => n + 1)}
      error=${me.error.status === 401 && sessionStorage.getItem(TOKEN_KEY) !== null ? 'The token was refused (missing, wrong or expired).' : me.error.status === 401 ? undefined : me.error.message}
    />`;
  return html`<header>
      <a href="#/">Icepack console</a><span>signed in as ${me.data?.user}</span>
      <button
        onClick=${() => {
          sessionStorage.removeItem(TOKEN_KEY);
          setSignedIn((n) => n + 1);
        }}
      >
        Sign out
      </button>
    </header>
    <main>
      ${
        where.page === 'table'
          ? html`<${TablePage} key=${where.key} tableKey=${where.key} />`
          : where.page === 'queue'
            ? html`<${QueuePage} key=${where.catalog} catalog=${where.catalog} />`
            : html`<${Overview} />`
      }
    </main>`;
}

// `./dev up` prints the URL with the local token in the fragment (never sent to a server):
// keep it for this tab's session and drop it from the address bar and history.
if (location.hash.startsWith('#token=')) {
  sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(location.hash.slice('#token='.length)));
  history.replaceState(null, '', `${location.pathname}#/`);
}

render(html`<${App} />`, document.getElementById('app')!);
