import { ByteBoundedLru } from './byte-bounded-lru.ts';

/** Default bound of a manifest cache: 64 MiB of estimated heap. */
export const DEFAULT_MANIFEST_CACHE_BYTES = 64 * 1024 * 1024;

export interface ManifestCacheOptions {
  /** Upper bound of the estimated bytes held. Default: `DEFAULT_MANIFEST_CACHE_BYTES`. */
  readonly maxBytes?: number;
}

/** What was read from storage through a cache: for tests, metrics and the benchmark. */
export interface ManifestReadStats {
  manifestListsRead: number;
  manifestsRead: number;
  entriesDecoded: number;
  bytesRead: number;
  cacheHits: number;
}

/**
 * Manifests and manifest lists never change once written, so anything derived from one
 * (its decoded entries, its health aggregate) is cached by path, within a byte bound.
 * Share one cache across tables; it is not tied to a FileIO.
 */
export class ManifestCache {
  readonly #lru: ByteBoundedLru<string, unknown>;
  readonly stats: ManifestReadStats = {
    manifestListsRead: 0,
    manifestsRead: 0,
    entriesDecoded: 0,
    bytesRead: 0,
    cacheHits: 0,
  };

  constructor(options: ManifestCacheOptions = {}) {
    this.#lru = new ByteBoundedLru(options.maxBytes ?? DEFAULT_MANIFEST_CACHE_BYTES);
  }

  get maxBytes(): number {
    return this.#lru.maxBytes;
  }

  /** Estimated bytes held now; never above `maxBytes`. */
  get sizeBytes(): number {
    return this.#lru.sizeBytes;
  }

  get size(): number {
    return this.#lru.size;
  }

  get<T>(kind: string, path: string): T | undefined {
    const value = this.#lru.get(`${kind}\u0000${path}`) as T | undefined;
    if (value !== undefined) this.stats.cacheHits++;
    return value;
  }

  set(kind: string, path: string, value: unknown, bytes: number): void {
    this.#lru.set(`${kind}\u0000${path}`, value, bytes + 2 * (kind.length + path.length) + 64);
  }

  resetStats(): void {
    this.stats.manifestListsRead = 0;
    this.stats.manifestsRead = 0;
    this.stats.entriesDecoded = 0;
    this.stats.bytesRead = 0;
    this.stats.cacheHits = 0;
  }

  clear(): void {
    this.#lru.clear();
  }
}
