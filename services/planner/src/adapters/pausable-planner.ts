import { parseTableKey, type TableState } from '@icepack/types';
import { PolicyKeys, type CatalogPolicy } from '@icepack/policy';
import type { ConsoleStore } from './console-store.ts';
import type { HandleOutcome, PlanExplanation, Planner } from './planner.ts';

type Planning = Pick<Planner, 'handleState' | 'handleDropped' | 'replan' | 'explain'>;

export interface PausablePlannerOptions {
  /** The planner as configured. */
  readonly planner: Planning;
  /**
   * The same planner with `icepack.enabled=false` laid over every catalog's settings: what a
   * paused table is planned with, so it gets the planner's own pause (no new tasks, waiting
   * ones removed as `skipped`, the explanation says paused) without a second pause notion.
   */
  readonly paused: Planning;
  readonly pauses: Pick<ConsoleStore, 'pausesOf'>;
}

/**
 * Applies the console's pauses (ADR 0020): a table paused from the console, or in a catalog
 * paused from the console, is planned by the paused planner. One Redis round trip per state.
 */
export class PausablePlanner implements Planning {
  readonly #o: PausablePlannerOptions;

  constructor(options: PausablePlannerOptions) {
    this.#o = options;
  }

  async #for(table: TableState['table']): Promise<Planning> {
    const p = await this.#o.pauses.pausesOf(table);
    return p.table === undefined && p.catalog === undefined ? this.#o.planner : this.#o.paused;
  }

  async handleState(state: TableState): Promise<HandleOutcome> {
    return (await this.#for(state.table)).handleState(state);
  }

  async replan(state: TableState): Promise<HandleOutcome> {
    return (await this.#for(state.table)).replan(state);
  }

  handleDropped(key: string): Promise<HandleOutcome> {
    return this.#o.planner.handleDropped(key);
  }

  async explain(key: string): Promise<PlanExplanation | undefined> {
    return (await this.#for(parseTableKey(key))).explain(key);
  }
}

/**
 * A catalog's policy with the planner's pause laid over its settings and every namespace
 * override (for the paused planner): no override of the catalog can switch the pause off.
 */
export function pausedPolicy(
  policyOf: (catalog: string) => CatalogPolicy | undefined,
): (catalog: string) => CatalogPolicy {
  const off = { [PolicyKeys.enabled]: 'false' };
  return (catalog) => {
    const policy = policyOf(catalog);
    return {
      settings: { ...policy?.settings, ...off },
      namespaces: Object.fromEntries(
        Object.entries(policy?.namespaces ?? {}).map(([namespace, settings]) => [
          namespace,
          { ...settings, ...off },
        ]),
      ),
    };
  };
}
