import { catalogSchema, dnsLabel, formatZodError, type Catalog } from '@icepack/types';
import { z } from 'zod';

/**
 * A binding as the scanner needs it: only the catalog name matters here (the resource
 * group is the dispatcher's business). A full `Binding` object is accepted as well.
 */
const bindingEntry = z.union([
  dnsLabel(63).transform((catalog) => ({ catalog })),
  z.looseObject({ catalog: dnsLabel(63) }).transform(({ catalog }) => ({ catalog })),
]);

const bootstrapSchema = z.strictObject({
  catalogs: z.array(catalogSchema).default([]),
  /** Catalog names (or binding objects); a catalog is scanned only when bound. */
  bindings: z.array(bindingEntry).default([]),
});

export interface Bootstrap {
  readonly catalogs: readonly Catalog[];
  readonly bindings: readonly string[];
}

/** The bootstrap document is invalid; the message names the field. */
export class BootstrapError extends Error {
  override readonly name = 'BootstrapError';
}

/** Validates a parsed bootstrap document (`{catalogs: [...], bindings: [...]}`). */
export function parseBootstrap(document: unknown, source: string): Bootstrap {
  const result = bootstrapSchema.safeParse(document ?? {});
  if (!result.success) {
    throw new BootstrapError(`invalid bootstrap ${source}: ${formatZodError(result.error)}`);
  }
  const names = new Set<string>();
  for (const catalog of result.data.catalogs) {
    if (names.has(catalog.name)) {
      throw new BootstrapError(
        `invalid bootstrap ${source}: catalog ${catalog.name} defined twice`,
      );
    }
    names.add(catalog.name);
  }
  return {
    catalogs: result.data.catalogs,
    bindings: [...new Set(result.data.bindings.map((b) => b.catalog))],
  };
}
