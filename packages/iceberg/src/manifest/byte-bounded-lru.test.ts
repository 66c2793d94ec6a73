import { describe, expect, it } from 'vitest';
import { ByteBoundedLru } from './byte-bounded-lru.ts';

describe('ByteBoundedLru', () => {
  it('never holds more than its bound, evicting the least recently used first', () => {
    const lru = new ByteBoundedLru<string, number>(100);
    lru.set('a', 1, 40);
    lru.set('b', 2, 40);
    expect(lru.get('a')).toBe(1); // a is now the most recent
    lru.set('c', 3, 40);
    expect(lru.sizeBytes).toBe(80);
    expect(lru.has('b')).toBe(false);
    expect(lru.has('a') && lru.has('c')).toBe(true);
    for (let i = 0; i < 1000; i++) {
      lru.set(`k${i}`, i, 1 + (i % 37));
      expect(lru.sizeBytes).toBeLessThanOrEqual(100);
    }
  });

  it('does not store a value larger than the whole bound', () => {
    const lru = new ByteBoundedLru<string, string>(10);
    lru.set('small', 'x', 5);
    expect(lru.set('huge', 'y', 11)).toBe(false);
    expect(lru.has('huge')).toBe(false);
    expect(lru.get('small')).toBe('x');
  });

  it('replacing a key accounts for the new size only', () => {
    const lru = new ByteBoundedLru<string, string>(10);
    lru.set('a', 'x', 6);
    lru.set('a', 'y', 3);
    expect(lru.sizeBytes).toBe(3);
    expect(lru.get('a')).toBe('y');
  });
});
