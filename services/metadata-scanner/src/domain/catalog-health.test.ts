import { describe, expect, it } from 'vitest';
import { CatalogHealth } from './catalog-health.ts';

describe('CatalogHealth', () => {
  it('holds a failing catalog off for a growing, capped backoff and reports it', () => {
    let now = 0;
    const health = new CatalogHealth({ initialMs: 1_000, maxMs: 4_000 }, () => now);
    expect(health.holdOffMs('a')).toBe(0);
    expect(health.report()).toEqual({ ok: true });
    const first = health.failed('a', 'connection: refused');
    expect(first).toBeGreaterThanOrEqual(500);
    expect(first).toBeLessThanOrEqual(1_000);
    expect(health.holdOffMs('a')).toBe(first);
    now += first;
    expect(health.holdOffMs('a')).toBe(0);
    health.failed('a', 'again');
    const delays = [health.failed('a', 'again'), health.failed('a', 'again')];
    for (const delay of delays) expect(delay).toBeLessThanOrEqual(4_000);
    expect(health.report()).toEqual({ ok: false, detail: 'a: again (4 failures)' });
    expect(health.holdOffMs('b')).toBe(0);
  });

  it('is healthy again after a success', () => {
    const health = new CatalogHealth();
    health.failed('a', 'x');
    expect(health.succeeded('a')).toBe(true);
    expect(health.succeeded('a')).toBe(false);
    expect(health.report().ok).toBe(true);
  });
});
