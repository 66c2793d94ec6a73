import { describe, expect, it } from 'vitest';
import { expired, refreshAtMs, refreshDue } from './refresh-decision.ts';

const HOUR = 3_600_000;
const MIN = 60_000;

describe('the refresh decision', () => {
  it('refreshes the margin before expiry, not before', () => {
    const lifetime = { issuedAtMs: 0, expiresAtMs: HOUR };
    expect(refreshAtMs(lifetime, 5 * MIN)).toBe(HOUR - 5 * MIN);
    expect(refreshDue(HOUR - 5 * MIN - 1, lifetime, 5 * MIN)).toBe(false);
    expect(refreshDue(HOUR - 5 * MIN, lifetime, 5 * MIN)).toBe(true);
    expect(refreshDue(HOUR + 1, lifetime, 5 * MIN)).toBe(true);
  });

  it('waits at least half the lifetime of a short-lived credential', () => {
    const lifetime = { issuedAtMs: 10 * MIN, expiresAtMs: 12 * MIN };
    expect(refreshAtMs(lifetime, 5 * MIN)).toBe(11 * MIN);
    expect(refreshDue(11 * MIN - 1, lifetime, 5 * MIN)).toBe(false);
    expect(refreshDue(11 * MIN, lifetime, 5 * MIN)).toBe(true);
  });

  it('never refreshes a credential that does not expire', () => {
    const lifetime = { issuedAtMs: 0, expiresAtMs: Infinity };
    expect(refreshAtMs(lifetime, 5 * MIN)).toBe(Infinity);
    expect(refreshDue(Number.MAX_SAFE_INTEGER, lifetime, 5 * MIN)).toBe(false);
    expect(expired(Number.MAX_SAFE_INTEGER, lifetime)).toBe(false);
  });

  it('refreshes at once a credential issued already expired, and calls it expired', () => {
    const lifetime = { issuedAtMs: HOUR, expiresAtMs: HOUR - 1 };
    expect(refreshDue(HOUR, lifetime, 5 * MIN)).toBe(true);
    expect(expired(HOUR, lifetime)).toBe(true);
  });
});
