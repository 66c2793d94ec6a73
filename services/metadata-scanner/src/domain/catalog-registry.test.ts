import { parseCatalog } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { CatalogRegistry } from './catalog-registry.ts';

const catalog = (name: string, uri = 'http://c:8181') => parseCatalog({ name, type: 'rest', uri });

describe('CatalogRegistry', () => {
  it('activates a catalog only when it is both defined and bound, in either order', () => {
    const registry = new CatalogRegistry();
    registry.bind('a');
    expect(registry.active('a')).toBeUndefined();
    expect(registry.boundButUndefined()).toEqual(['a']);
    registry.define(catalog('a'));
    registry.define(catalog('b'));
    expect(registry.activeCatalogs().map((c) => c.name)).toEqual(['a']);
    registry.bind('b');
    expect(registry.activeCatalogs().map((c) => c.name)).toEqual(['a', 'b']);
  });

  it('deactivates on unbinding or removal and tells listeners about real changes only', () => {
    const registry = new CatalogRegistry();
    let changes = 0;
    registry.onChange(() => changes++);
    registry.define(catalog('a'));
    registry.bind('a');
    registry.bind('a');
    expect(changes).toBe(2);
    registry.unbind('a');
    expect(registry.active('a')).toBeUndefined();
    registry.bind('a');
    registry.remove('a');
    expect(registry.active('a')).toBeUndefined();
    registry.remove('a');
    expect(changes).toBe(5);
  });

  it('takes a redefinition (new URI) at once', () => {
    const registry = new CatalogRegistry();
    registry.define(catalog('a'));
    registry.bind('a');
    registry.define(catalog('a', 'http://other:8181'));
    expect(registry.active('a')?.uri).toBe('http://other:8181');
  });
});
