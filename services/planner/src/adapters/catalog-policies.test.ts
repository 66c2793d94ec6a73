import { describe, expect, it } from 'vitest';
import { CatalogPolicies } from './catalog-policies.ts';

describe('CatalogPolicies', () => {
  const fallback = { lake: { 'icepack.small-file-threshold': '5' } };

  it('uses the catalog definition’s policy, namespace overrides included', () => {
    const policies = new CatalogPolicies(fallback);
    const policy = {
      settings: { 'icepack.small-file-threshold': '40' },
      namespaces: { sales: { 'icepack.enabled': 'false' } },
    };
    policies.set('lake', { policy });
    expect(policies.policyOf('lake')).toEqual(policy);
  });

  it('falls back to the deployment default for a catalog without a policy, and after a tombstone', () => {
    const policies = new CatalogPolicies(fallback);
    expect(policies.policyOf('lake')).toEqual({ settings: fallback.lake });
    policies.set('lake', {});
    expect(policies.policyOf('lake')).toEqual({ settings: fallback.lake });
    policies.set('lake', { policy: { settings: {}, namespaces: {} } });
    expect(policies.policyOf('lake')).toEqual({ settings: {}, namespaces: {} });
    policies.set('lake', undefined);
    expect(policies.policyOf('lake')).toEqual({ settings: fallback.lake });
    expect(policies.policyOf('other')).toBeUndefined();
  });
});
