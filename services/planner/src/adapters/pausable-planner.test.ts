import { PolicyKeys, policyLayers, resolvePolicy } from '@icepack/policy';
import { describe, expect, it } from 'vitest';
import { pausedPolicy } from './pausable-planner.ts';

describe('pausedPolicy', () => {
  it('pauses every table of the catalog, whatever the catalog or a namespace override says', () => {
    const paused = pausedPolicy(() => ({
      settings: { [PolicyKeys.enabled]: 'true', [PolicyKeys.snapshotThreshold]: '7' },
      namespaces: { sales: { [PolicyKeys.enabled]: 'true' } },
    }))('lake');
    for (const namespace of [['sales'], ['other']]) {
      const { policy } = resolvePolicy({}, policyLayers(paused, namespace));
      expect(policy.enabled, namespace.join('.')).toBe(false);
    }
    // The rest of the catalog's policy still applies.
    expect(paused.settings?.[PolicyKeys.snapshotThreshold]).toBe('7');
  });

  it('pauses a catalog without any policy', () => {
    const paused = pausedPolicy(() => undefined)('lake');
    expect(resolvePolicy({}, policyLayers(paused, ['db'])).policy.enabled).toBe(false);
  });
});
