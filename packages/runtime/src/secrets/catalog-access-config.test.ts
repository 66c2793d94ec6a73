import { describe, expect, it } from 'vitest';
import { isLocalCatalog } from './catalog-access-config.ts';

describe('isLocalCatalog', () => {
  it('is true for catalogs named in ICEPACK_LOCAL_CATALOGS, or all with *', () => {
    expect(isLocalCatalog('prod', [])).toBe(false);
    expect(isLocalCatalog('prod', ['dev'])).toBe(false);
    expect(isLocalCatalog('prod', ['dev', 'prod'])).toBe(true);
    expect(isLocalCatalog('anything', ['*'])).toBe(true);
  });
});
