import { tableKey } from '@icepack/types';
import type { LastSucceededStore } from '../adapters/last-succeeded.ts';
import type { TableStateStore } from '../adapters/state-store.ts';
import { withLastMaintenance } from '../domain/last-maintenance.ts';
import { summarize, type TableSummary } from '../domain/table-overview.ts';

export interface TableSummariesOptions {
  readonly states: Pick<TableStateStore, 'page'>;
  /**
   * When each type last succeeded per table: the planner's record (stored states do not carry
   * it). Default none (the states' own `lastMaintenance`).
   */
  readonly lastSucceeded?: Pick<LastSucceededStore, 'all'>;
  /** How long one read of all states serves the overview. Default 5 s. */
  readonly maxAgeMs?: number;
  /** HSCAN COUNT. Default 1000. */
  readonly batch?: number;
  readonly now?: () => number;
}

/**
 * Every table's summary, read from the planner's stored states (HSCAN) at most once per
 * `maxAgeMs` and only while someone looks; concurrent requests share one read. Paging and
 * sorting then run in memory (`domain/table-overview.ts`).
 */
export class TableSummaries {
  readonly #o: Required<TableSummariesOptions>;
  #cached: { at: number; rows: readonly TableSummary[] } | undefined;
  #reading: Promise<readonly TableSummary[]> | undefined;

  constructor(options: TableSummariesOptions) {
    this.#o = {
      maxAgeMs: 5_000,
      batch: 1_000,
      now: () => Date.now(),
      lastSucceeded: { all: () => Promise.resolve(new Map()) },
      ...options,
    };
  }

  async all(): Promise<readonly TableSummary[]> {
    const cached = this.#cached;
    if (cached !== undefined && this.#o.now() - cached.at < this.#o.maxAgeMs) return cached.rows;
    this.#reading ??= this.#read().finally(() => {
      this.#reading = undefined;
    });
    return this.#reading;
  }

  /** Forget the cached read (after an action, so the next page shows it). */
  invalidate(): void {
    this.#cached = undefined;
  }

  async #read(): Promise<readonly TableSummary[]> {
    const at = this.#o.now();
    const rows: TableSummary[] = [];
    const records = await this.#o.lastSucceeded.all(this.#o.batch);
    let cursor = '0';
    do {
      const page = await this.#o.states.page(cursor, this.#o.batch);
      for (const state of page.states)
        rows.push(summarize(withLastMaintenance(state, records.get(tableKey(state.table)) ?? {})));
      cursor = page.cursor;
    } while (cursor !== '0');
    this.#cached = { at, rows };
    return rows;
  }
}
