import {
  policyLayers,
  resolvePolicy,
  type CatalogPolicy,
  type PolicySettings,
  type ResolvedPolicy,
} from '@icepack/policy';
import type { TableState } from '@icepack/types';

/** Stands for "no settings" in the cache's keys (a layer the catalog policy does not have). */
const NONE: PolicySettings = Object.freeze({});

/** Resolved policies one cache keeps per (catalog settings, namespace settings), at most. */
export const POLICY_CACHE_SIZE = 1_000;

/**
 * `resolvePolicy` of a table's properties under its catalog's and namespace's settings and the
 * console's pause, remembered: resolving was ~30 µs of every table state the planner handles,
 * and the tables of a namespace mostly share their properties (issue 17 point 6). Pure input,
 * pure output: the answer for the same settings objects, pause and properties is the same
 * object. The settings are keyed by identity — a new catalog definition brings new objects,
 * so it is never answered from the old ones — and the properties by their JSON. The answer is
 * shared: callers must not change it (nothing does; the rules build new objects).
 */
export class PolicyCache {
  readonly #byLayers = new WeakMap<object, WeakMap<object, Map<string, ResolvedPolicy>>>();
  readonly #size: number;

  constructor(size = POLICY_CACHE_SIZE) {
    this.#size = Math.max(1, size);
  }

  resolve(
    catalogPolicy: CatalogPolicy | undefined,
    state: Pick<TableState, 'table' | 'properties'>,
    paused: boolean,
  ): ResolvedPolicy {
    const { namespace } = state.table;
    const catalog = catalogPolicy?.settings ?? NONE;
    const ns = catalogPolicy?.namespaces?.[namespace.join('.')] ?? NONE;
    let byNamespace = this.#byLayers.get(catalog);
    if (byNamespace === undefined) {
      byNamespace = new WeakMap();
      this.#byLayers.set(catalog, byNamespace);
    }
    let resolved = byNamespace.get(ns);
    if (resolved === undefined) {
      resolved = new Map();
      byNamespace.set(ns, resolved);
    }
    const key = `${paused ? 'p' : '-'}${JSON.stringify(state.properties)}`;
    const hit = resolved.get(key);
    if (hit !== undefined) return hit;
    const answer = resolvePolicy(state.properties, policyLayers(catalogPolicy, namespace, paused));
    // Tables whose properties all differ would grow it without end: start again when full.
    if (resolved.size >= this.#size) resolved.clear();
    resolved.set(key, answer);
    return answer;
  }
}
