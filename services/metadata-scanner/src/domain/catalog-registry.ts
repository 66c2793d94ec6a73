import type { Catalog } from '@icepack/types';

/**
 * Which catalogs exist (`CatalogDefined`) and which are bound (`BindingUpdated`). The
 * scanner works only on catalogs that are both: defined (it needs the URI) and bound
 * (the operator asked for it). Pure state; the adapters feed it and react to changes.
 */
export class CatalogRegistry {
  readonly #catalogs = new Map<string, Catalog>();
  readonly #bound = new Set<string>();
  readonly #listeners: (() => void)[] = [];

  /** Called after every change. */
  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  define(catalog: Catalog): void {
    this.#catalogs.set(catalog.name, catalog);
    this.#changed();
  }

  remove(name: string): void {
    if (this.#catalogs.delete(name)) this.#changed();
  }

  bind(name: string): void {
    if (this.#bound.has(name)) return;
    this.#bound.add(name);
    this.#changed();
  }

  unbind(name: string): void {
    if (this.#bound.delete(name)) this.#changed();
  }

  /** The catalog when it is defined and bound; otherwise undefined. */
  active(name: string): Catalog | undefined {
    return this.#bound.has(name) ? this.#catalogs.get(name) : undefined;
  }

  /** Every defined and bound catalog, by name. */
  activeCatalogs(): Catalog[] {
    return [...this.#catalogs.values()]
      .filter((c) => this.#bound.has(c.name))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Bound names without a definition yet: worth a warning, nothing can be scanned. */
  boundButUndefined(): string[] {
    return [...this.#bound].filter((name) => !this.#catalogs.has(name)).sort();
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }
}
