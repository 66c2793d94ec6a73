import { isIcebergError, type RestCatalog } from '@icepack/iceberg';
import type { TableId } from '@icepack/types';

/**
 * Every table of every namespace, breadth-first. A namespace dropped while the walk runs
 * (404 on its children or tables) is skipped rather than failing the walk: its tables are
 * gone, so the walk is still complete. Any other error fails the walk.
 */
export async function* walkCatalog(
  client: RestCatalog,
  signal?: AbortSignal,
): AsyncGenerator<TableId> {
  const queue: string[][] = [[]];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const parent = queue.shift()!;
    let children: string[][];
    try {
      children = await client.listNamespaces(parent, signal);
    } catch (error) {
      if (parent.length > 0 && isIcebergError(error, 'not-found')) continue;
      throw error;
    }
    for (const ns of children) {
      const key = ns.join('\u001f');
      // A server that ignores `parent` lists the same namespaces again: do not loop.
      if (seen.has(key) || ns.length <= parent.length) continue;
      seen.add(key);
      queue.push(ns);
      let tables: TableId[];
      try {
        tables = await client.listTables(ns, signal);
      } catch (error) {
        if (isIcebergError(error, 'not-found')) continue;
        throw error;
      }
      yield* tables;
    }
  }
}
