import { describe, expect, it } from 'vitest';
import { evictionPolicyWarning } from './eviction-policy.ts';

describe('evictionPolicyWarning', () => {
  it('is silent for noeviction or an unknown policy', () => {
    expect(evictionPolicyWarning('noeviction')).toBeUndefined();
    expect(evictionPolicyWarning(undefined)).toBeUndefined();
  });

  it('warns, naming the policy and the fix, for any evicting policy', () => {
    expect(evictionPolicyWarning('allkeys-lru')).toMatch(/"allkeys-lru".*noeviction/);
    expect(evictionPolicyWarning('volatile-ttl')).toMatch(/"volatile-ttl"/);
  });
});
