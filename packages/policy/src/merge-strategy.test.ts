import { describe, expect, it } from 'vitest';
import { resolvePolicy } from './policy.ts';
import { PolicyDefaults } from './policy-keys.ts';
import { parseByteSize, parseMergeStrategy } from './property-parsers.ts';

describe('icepack.merge.strategy', () => {
  it('defaults to all partitions over their thresholds', () => {
    expect(resolvePolicy({}).policy.mergeStrategy).toEqual({ kind: 'all' });
  });

  it.each([
    ['all', { kind: 'all' }],
    [' ALL ', { kind: 'all' }],
    ['recent:10', { kind: 'recent', partitions: 10 }],
    ['recent:7d', { kind: 'recent', days: 7 }],
    ['recent: 3 d', { kind: 'recent', days: 3 }],
    [
      'selected:region=eu,event_day=2026-01-02;region=null',
      { kind: 'selected', filters: [{ region: 'eu', event_day: '2026-01-02' }, { region: null }] },
    ],
  ])('reads %j', (text, expected) => {
    expect(parseMergeStrategy(text)).toEqual({ ok: true, value: expected });
  });

  it.each(['newest', 'recent', 'recent:0', 'recent:-1', 'recent:2w', 'selected:', 'selected:=eu'])(
    'refuses %j, naming what it expects',
    (text) => {
      const parsed = parseMergeStrategy(text);
      expect(parsed.ok).toBe(false);
      expect(!parsed.ok && parsed.reason).toMatch(/expected all, recent:<partitions>/);
    },
  );

  it('a bad table value is a problem naming the key; the catalog setting below is used', () => {
    const { policy, problems } = resolvePolicy(
      { 'icepack.merge.strategy': 'latest' },
      { catalog: { 'icepack.merge.strategy': 'recent:2d' } },
    );
    expect(policy.mergeStrategy).toEqual({ kind: 'recent', days: 2 });
    expect(problems).toEqual([
      expect.objectContaining({
        key: 'icepack.merge.strategy',
        value: 'latest',
        source: 'table',
        reason: expect.stringMatching(/; using recent$/) as unknown,
      }),
    ]);
  });
});

describe('icepack.max-bytes-per-task', () => {
  it('defaults to 100 GiB', () => {
    expect(resolvePolicy({}).policy.maxBytesPerTask).toBe(PolicyDefaults.maxBytesPerTask);
    expect(PolicyDefaults.maxBytesPerTask).toBe(100 * 1024 ** 3);
  });

  it.each([
    ['1073741824', 1024 ** 3],
    ['512MiB', 512 * 1024 ** 2],
    ['100 GiB', 100 * 1024 ** 3],
    ['2tib', 2 * 1024 ** 4],
  ])('reads %j', (text, bytes) => {
    expect(parseByteSize(text)).toEqual({ ok: true, value: bytes });
  });

  it.each(['0', '-5', '1.5GiB', '10GB', 'lots', '99999999999TiB'])('refuses %j', (text) => {
    expect(parseByteSize(text).ok).toBe(false);
  });

  it('a bad value names the key and keeps the default', () => {
    const { policy, problems } = resolvePolicy({ 'icepack.max-bytes-per-task': '10GB' });
    expect(policy.maxBytesPerTask).toBe(PolicyDefaults.maxBytesPerTask);
    expect(problems).toEqual([
      expect.objectContaining({
        key: 'icepack.max-bytes-per-task',
        value: '10GB',
        source: 'table',
      }),
    ]);
  });
});
