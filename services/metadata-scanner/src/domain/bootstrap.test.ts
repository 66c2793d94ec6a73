import { describe, expect, it } from 'vitest';
import { BootstrapError, parseBootstrap } from './bootstrap.ts';

describe('parseBootstrap', () => {
  it('accepts catalogs and bindings given as names or binding objects', () => {
    const bootstrap = parseBootstrap(
      {
        catalogs: [{ name: 'prod', type: 'rest', uri: 'http://catalog:8181' }],
        bindings: ['prod', { catalog: 'dev', group: 'dev', slots: 2 }, 'prod'],
      },
      'test',
    );
    expect(bootstrap.catalogs.map((c) => c.name)).toEqual(['prod']);
    expect(bootstrap.catalogs[0]!.auth).toEqual({ type: 'none' });
    expect(bootstrap.bindings).toEqual(['prod', 'dev']);
  });

  it('names the bad field', () => {
    expect(() =>
      parseBootstrap(
        { catalogs: [{ name: 'Prod', type: 'rest', uri: 'http://x' }] },
        'scanner.yaml',
      ),
    ).toThrow(/invalid bootstrap scanner.yaml: catalogs\[0\]\.name/);
    expect(() => parseBootstrap({ catalog: [] }, 'f')).toThrow(BootstrapError);
  });

  it('rejects an inline secret and a catalog defined twice', () => {
    expect(() =>
      parseBootstrap(
        {
          catalogs: [
            { name: 'p', type: 'rest', uri: 'http://x', auth: { type: 'bearer', token: 'abc' } },
          ],
        },
        'f',
      ),
    ).toThrow(/inline secret value rejected/);
    const c = { name: 'p', type: 'rest', uri: 'http://x' };
    expect(() => parseBootstrap({ catalogs: [c, c] }, 'f')).toThrow(/defined twice/);
  });

  it('treats an empty document as no catalogs', () => {
    expect(parseBootstrap(null, 'f')).toEqual({ catalogs: [], bindings: [] });
  });
});
