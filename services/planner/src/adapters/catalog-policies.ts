import type { CatalogPolicy, PolicySettings } from '@icepack/policy';
import type { Catalog } from '@icepack/types';

/**
 * The policy of each catalog, from its definition on `icepack.catalogs` (the provisioner's
 * API or bootstrap file): the layers the planner resolves a table's policy with, the same the
 * scanner measured with. A catalog whose definition has no `policy` falls back to the
 * deployment default (`ICEPACK_PLANNER_CATALOG_POLICY`), which the scanner does not see.
 */
export class CatalogPolicies {
  readonly #defined = new Map<string, CatalogPolicy | undefined>();
  readonly #fallback: Readonly<Record<string, PolicySettings>>;

  constructor(fallback: Readonly<Record<string, PolicySettings>> = {}) {
    this.#fallback = fallback;
  }

  /** A `CatalogDefined` (a catalog) or a tombstone (undefined). */
  set(name: string, catalog: Pick<Catalog, 'policy'> | undefined): void {
    if (catalog === undefined) this.#defined.delete(name);
    else this.#defined.set(name, catalog.policy);
  }

  policyOf(name: string): CatalogPolicy | undefined {
    const defined = this.#defined.get(name);
    if (defined !== undefined) return defined;
    const settings = this.#fallback[name];
    return settings === undefined ? undefined : { settings };
  }
}
