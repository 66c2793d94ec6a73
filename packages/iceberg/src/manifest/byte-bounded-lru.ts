/**
 * A least-recently-used map whose values carry an estimated size in bytes. The sum of the
 * sizes never exceeds `maxBytes`: inserting evicts the least recently used values first, and
 * a value larger than the whole bound is not stored at all.
 */
export class ByteBoundedLru<K, V> {
  readonly maxBytes: number;
  readonly #items = new Map<K, { value: V; bytes: number }>();
  #sizeBytes = 0;
  #evictions = 0;

  constructor(maxBytes: number) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
      throw new RangeError(`maxBytes must be a non-negative integer, got ${maxBytes}`);
    }
    this.maxBytes = maxBytes;
  }

  /** Estimated bytes held now (always ≤ `maxBytes`). */
  get sizeBytes(): number {
    return this.#sizeBytes;
  }

  get size(): number {
    return this.#items.size;
  }

  get evictions(): number {
    return this.#evictions;
  }

  get(key: K): V | undefined {
    const item = this.#items.get(key);
    if (item === undefined) return undefined;
    // Re-insert: Map iteration order is insertion order, so the first key is the LRU one.
    this.#items.delete(key);
    this.#items.set(key, item);
    return item.value;
  }

  has(key: K): boolean {
    return this.#items.has(key);
  }

  /** Stores `value`; returns false when it is larger than the whole bound (not stored). */
  set(key: K, value: V, bytes: number): boolean {
    this.delete(key);
    if (bytes > this.maxBytes) return false;
    while (this.#sizeBytes + bytes > this.maxBytes) {
      const oldest = this.#items.keys().next();
      if (oldest.done === true) break;
      this.delete(oldest.value);
      this.#evictions++;
    }
    this.#items.set(key, { value, bytes });
    this.#sizeBytes += bytes;
    return true;
  }

  delete(key: K): boolean {
    const item = this.#items.get(key);
    if (item === undefined) return false;
    this.#items.delete(key);
    this.#sizeBytes -= item.bytes;
    return true;
  }

  clear(): void {
    this.#items.clear();
    this.#sizeBytes = 0;
  }
}
