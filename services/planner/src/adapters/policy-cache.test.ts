import { describe, expect, it } from 'vitest';
import { policyLayers, resolvePolicy, type CatalogPolicy } from '@icepack/policy';
import { sampleTableId } from '@icepack/types';
import { PolicyCache } from './policy-cache.ts';

const table = sampleTableId({ namespace: ['sales'] });
const state = (properties: Record<string, string>) => ({ table, properties });
const uncached = (
  catalog: CatalogPolicy | undefined,
  props: Record<string, string>,
  paused = false,
) => resolvePolicy(props, policyLayers(catalog, table.namespace, paused));

describe('PolicyCache', () => {
  it('answers what resolvePolicy answers, for every layer, the pause and the properties', () => {
    const cache = new PolicyCache();
    const catalog: CatalogPolicy = {
      settings: { 'icepack.merge.enabled': 'false' },
      namespaces: { sales: { 'icepack.merge.enabled': 'true', 'icepack.sort.enabled': 'nope' } },
    };
    for (const c of [undefined, catalog, { settings: { 'icepack.enabled': 'false' } }])
      for (const props of [
        {},
        { 'icepack.merge.enabled': 'false' },
        { 'icepack.enabled': 'x' },
      ] as Record<string, string>[])
        for (const paused of [false, true])
          expect(cache.resolve(c, state(props), paused)).toEqual(uncached(c, props, paused));
  });

  it('answers a new catalog definition from its settings, not the ones it replaced', () => {
    const cache = new PolicyCache();
    const before: CatalogPolicy = { settings: { 'icepack.merge.enabled': 'true' } };
    expect(cache.resolve(before, state({}), false).policy.taskTypes.merge).toBe(true);
    const after: CatalogPolicy = { settings: { 'icepack.merge.enabled': 'false' } };
    expect(cache.resolve(after, state({}), false).policy.taskTypes.merge).toBe(false);
    // The namespace layer too, under unchanged catalog settings.
    const settings = { 'icepack.merge.enabled': 'true' };
    const ns: CatalogPolicy = {
      settings,
      namespaces: { sales: { 'icepack.merge.enabled': 'false' } },
    };
    expect(cache.resolve({ settings }, state({}), false).policy.taskTypes.merge).toBe(true);
    expect(cache.resolve(ns, state({}), false).policy.taskTypes.merge).toBe(false);
  });

  it('remembers an answer, and starts again when full', () => {
    const cache = new PolicyCache(2);
    const first = cache.resolve(undefined, state({ a: '1' }), false);
    expect(cache.resolve(undefined, state({ a: '1' }), false)).toBe(first);
    cache.resolve(undefined, state({ a: '2' }), false);
    cache.resolve(undefined, state({ a: '3' }), false); // full: cleared, then kept
    const again = cache.resolve(undefined, state({ a: '1' }), false);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });
});
