/**
 * The ledger of benefit and cost (decision 0015): one entry per succeeded task run, from its
 * `succeeded` event, and one per resident session's idle tail (ADR 0046), from its
 * `ResidentSessionEnded`; what is kept (bounds), which entries a query means (window), and
 * what they add up to per catalog and per table. Pure.
 */
import {
  parseTableKey,
  tableKey,
  ValidationError,
  type HealthFigures,
  type SessionTail,
  type TaskBenefit,
  type TaskCost,
  type TaskEvent,
  type TaskType,
} from '@icepack/types';

/** What an entry stands for: a succeeded task run (the default), or a session's idle tail. */
export const LedgerEntryKind = { run: 'run', sessionTail: 'session-tail' } as const;
export type LedgerEntryKind = (typeof LedgerEntryKind)[keyof typeof LedgerEntryKind];

/**
 * One succeeded run: what it cost and what it removed. Or (`kind: 'session-tail'`) a resident
 * session's idle tail: the cores it held after its last task until it exited, under its
 * leader's task, run and table — a cost with no benefit, no task run of its own.
 */
export interface LedgerEntry {
  /** Absent: a task run. */
  readonly kind?: LedgerEntryKind;
  readonly at: string;
  readonly tableKey: string;
  readonly taskId: string;
  readonly taskType: TaskType;
  /** Absent on events of older dispatchers. */
  readonly runId?: string;
  readonly cost?: TaskCost;
  readonly benefit?: TaskBenefit;
  /** The table's figures when the run started and after it (the console's task history). */
  readonly before?: HealthFigures;
  readonly after?: HealthFigures;
}

/** How much of the ledger is kept, per catalog. */
export interface LedgerBounds {
  /** Entries older than this are dropped (ms). */
  readonly retentionMs: number;
  /** At most this many entries per catalog; the oldest go first. */
  readonly maxEntries: number;
}

export const DEFAULT_LEDGER_BOUNDS: LedgerBounds = {
  retentionMs: 30 * 86_400_000,
  maxEntries: 100_000,
};

/** A query's default window when `since` is not given: the last day before `until`. */
export const DEFAULT_LEDGER_WINDOW_MS = 86_400_000;

/** Most entries a table's answer lists (newest first); the totals count them all. */
export const MAX_LISTED_ENTRIES = 500;

/** The entry of a `succeeded` event, or undefined for any other status. */
export function ledgerEntryOf(event: TaskEvent): LedgerEntry | undefined {
  if (event.status !== 'succeeded') return undefined;
  return {
    at: event.at,
    tableKey: tableKey(event.table),
    taskId: event.taskId,
    taskType: event.taskType,
    ...(event.runId === undefined ? {} : { runId: event.runId }),
    ...(event.cost === undefined ? {} : { cost: event.cost }),
    ...(event.benefit === undefined ? {} : { benefit: event.benefit }),
    ...(event.before === undefined ? {} : { before: event.before }),
    ...(event.after === undefined ? {} : { after: event.after }),
  };
}

/** A resident session's idle tail as its entry (ADR 0046): its cost alone. */
export function ledgerEntryOfTail(tail: SessionTail): LedgerEntry {
  return {
    kind: LedgerEntryKind.sessionTail,
    at: tail.at,
    tableKey: tableKey(tail.table),
    taskId: tail.taskId,
    taskType: tail.taskType,
    runId: tail.runId,
    cost: tail.cost,
  };
}

/** A resident session's idle tail, not a task run. */
export function isSessionTail(entry: LedgerEntry): boolean {
  return entry.kind === LedgerEntryKind.sessionTail;
}

/**
 * What a store keeps after adding entries at `nowMs`: entries at or after `keepFromMs`, and
 * of those the newest `keepNewest`.
 */
export function ledgerTrim(
  nowMs: number,
  bounds: LedgerBounds,
): { keepFromMs: number; keepNewest: number } {
  return { keepFromMs: nowMs - bounds.retentionMs, keepNewest: bounds.maxEntries };
}

/** A checked ledger query: the catalog, maybe one table of it, and the window [since, until]. */
export interface LedgerQuery {
  readonly catalog: string;
  readonly table?: string;
  readonly sinceMs: number;
  readonly untilMs: number;
}

function bad(field: string, message: string): ValidationError {
  return new ValidationError('ledger query', [{ path: field, message, code: 'custom' }]);
}

function single(query: Readonly<Record<string, unknown>>, field: string): string | undefined {
  const value = query[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw bad(field, 'expected one value');
  return value;
}

function instant(query: Readonly<Record<string, unknown>>, field: string): number | undefined {
  const text = single(query, field);
  if (text === undefined) return undefined;
  // An ISO-8601 date-time with a zone, as every time in Icepack's messages.
  const ms = /^\d{4}-\d{2}-\d{2}T[\d:.]+(Z|[+-]\d{2}:\d{2})$/.test(text)
    ? Date.parse(text)
    : Number.NaN;
  if (Number.isNaN(ms)) {
    throw bad(field, `expected an ISO-8601 date-time with a zone, e.g. 2026-12-01T00:00:00Z`);
  }
  return ms;
}

/**
 * Reads `catalog` (required), `table` (a table key of that catalog, optional), `since` and
 * `until` (ISO-8601; default: the day before now). Throws `ValidationError` naming the field.
 */
export function parseLedgerQuery(
  query: Readonly<Record<string, unknown>>,
  nowMs: number,
): LedgerQuery {
  const catalog = single(query, 'catalog');
  if (catalog === undefined || catalog === '') throw bad('catalog', 'required');
  const table = single(query, 'table');
  if (table !== undefined) {
    let id;
    try {
      id = parseTableKey(table);
    } catch (error) {
      throw bad(
        'table',
        `expected a table key catalog/namespace/table: ${(error as Error).message}`,
      );
    }
    if (id.catalog !== catalog)
      throw bad('table', `is a table of catalog ${id.catalog}, not ${catalog}`);
  }
  const untilMs = instant(query, 'until') ?? nowMs;
  const sinceMs = instant(query, 'since') ?? untilMs - DEFAULT_LEDGER_WINDOW_MS;
  if (sinceMs > untilMs) throw bad('since', 'must not be after until');
  return { catalog, ...(table === undefined ? {} : { table }), sinceMs, untilMs };
}

/**
 * Sums of the entries' cost and benefit. The cost includes resident sessions' idle tails;
 * `runs`, `byType` and the counts without cost or CPU are of task runs only.
 */
export interface LedgerTotals {
  readonly runs: number;
  readonly byType: Partial<Record<TaskType, number>>;
  /** Resident sessions' idle tails counted in the cost, and their part of it. */
  readonly sessionTails: number;
  readonly sessionTailCoreSeconds: number;
  readonly cost: {
    readonly runMs: number;
    readonly coreSecondsRequested: number;
    readonly coreSecondsUsed: number;
    readonly bytesRead: number;
    readonly bytesWritten: number;
    readonly filesRewritten: number;
  };
  readonly benefit: {
    readonly dataFilesRemoved: number;
    readonly smallFilesRemoved: number;
    readonly deleteFilesRemoved: number;
    readonly snapshotsRemoved: number;
    readonly bytesSaved: number;
  };
  /** Runs whose event had no cost (older dispatchers), and runs without CPU measured. */
  readonly runsWithoutCost: number;
  readonly runsWithoutCpu: number;
}

const round3 = (value: number): number => Math.round(value * 1000) / 1000;

export function ledgerTotals(entries: readonly LedgerEntry[]): LedgerTotals {
  const byType: Partial<Record<TaskType, number>> = {};
  const cost = {
    runMs: 0,
    coreSecondsRequested: 0,
    coreSecondsUsed: 0,
    bytesRead: 0,
    bytesWritten: 0,
    filesRewritten: 0,
  };
  const benefit = {
    dataFilesRemoved: 0,
    smallFilesRemoved: 0,
    deleteFilesRemoved: 0,
    snapshotsRemoved: 0,
    bytesSaved: 0,
  };
  let runsWithoutCost = 0;
  let runsWithoutCpu = 0;
  let sessionTails = 0;
  let sessionTailCoreSeconds = 0;
  for (const e of entries) {
    if (isSessionTail(e)) {
      sessionTails += 1;
      sessionTailCoreSeconds += e.cost?.coreSecondsRequested ?? 0;
    } else {
      byType[e.taskType] = (byType[e.taskType] ?? 0) + 1;
      if (e.cost === undefined) runsWithoutCost += 1;
      if (e.cost?.coreSecondsUsed === undefined) runsWithoutCpu += 1;
    }
    cost.runMs += e.cost?.runMs ?? 0;
    cost.coreSecondsRequested += e.cost?.coreSecondsRequested ?? 0;
    cost.coreSecondsUsed += e.cost?.coreSecondsUsed ?? 0;
    cost.bytesRead += e.cost?.bytesRead ?? 0;
    cost.bytesWritten += e.cost?.bytesWritten ?? 0;
    cost.filesRewritten += e.cost?.filesRewritten ?? 0;
    benefit.dataFilesRemoved += e.benefit?.dataFilesRemoved ?? 0;
    benefit.smallFilesRemoved += e.benefit?.smallFilesRemoved ?? 0;
    benefit.deleteFilesRemoved += e.benefit?.deleteFilesRemoved ?? 0;
    benefit.snapshotsRemoved += e.benefit?.snapshotsRemoved ?? 0;
    benefit.bytesSaved += e.benefit?.bytesSaved ?? 0;
  }
  return {
    runs: entries.length - sessionTails,
    byType,
    sessionTails,
    sessionTailCoreSeconds: round3(sessionTailCoreSeconds),
    cost: {
      ...cost,
      coreSecondsRequested: round3(cost.coreSecondsRequested),
      coreSecondsUsed: round3(cost.coreSecondsUsed),
    },
    benefit,
    runsWithoutCost,
    runsWithoutCpu,
  };
}

/** The answer of `GET /v1/ledger`. */
export interface LedgerReport {
  readonly catalog: string;
  readonly table?: string;
  readonly since: string;
  readonly until: string;
  /** Entries before this were dropped by retention: a window reaching further back is partial. */
  readonly retainedSince: string;
  readonly totals: LedgerTotals;
  /** Catalog query: one row per table, most core-seconds requested first. */
  readonly tables?: readonly ({ readonly tableKey: string } & LedgerTotals)[];
  /** Table query: its entries, newest first, at most `MAX_LISTED_ENTRIES`. */
  readonly entries?: readonly LedgerEntry[];
  readonly entriesOmitted?: number;
}

/**
 * Aggregates the entries a store returned for the query's catalog: those in the window
 * (inclusive) and of the table when one is asked for.
 */
export function ledgerReport(
  query: LedgerQuery,
  stored: readonly LedgerEntry[],
  nowMs: number,
  bounds: LedgerBounds,
): LedgerReport {
  const inWindow = stored.filter((e) => {
    const ms = Date.parse(e.at);
    return ms >= query.sinceMs && ms <= query.untilMs;
  });
  const base = {
    catalog: query.catalog,
    since: new Date(query.sinceMs).toISOString(),
    until: new Date(query.untilMs).toISOString(),
    retainedSince: new Date(ledgerTrim(nowMs, bounds).keepFromMs).toISOString(),
  };
  if (query.table !== undefined) {
    const mine = inWindow
      .filter((e) => e.tableKey === query.table)
      .toSorted((a, b) => Date.parse(b.at) - Date.parse(a.at));
    const listed = mine.slice(0, MAX_LISTED_ENTRIES);
    return {
      ...base,
      table: query.table,
      totals: ledgerTotals(mine),
      entries: listed,
      ...(mine.length > listed.length ? { entriesOmitted: mine.length - listed.length } : {}),
    };
  }
  const tables = [...Map.groupBy(inWindow, (e) => e.tableKey)]
    .map(([key, of]) => ({ tableKey: key, ...ledgerTotals(of) }))
    .toSorted(
      (a, b) =>
        b.cost.coreSecondsRequested - a.cost.coreSecondsRequested ||
        a.tableKey.localeCompare(b.tableKey),
    );
  return { ...base, totals: ledgerTotals(inWindow), tables };
}
