import type { Catalog, ResourceGroup } from '@icepack/types';
import { catalogSchema, resourceGroupSchema, ValidationError, zodIssues } from '@icepack/types';
import { parse } from 'yaml';
import { z } from 'zod';

/** The declarative file: catalogs and resource groups, applied (upserted) at start-up. */
export interface Bootstrap {
  readonly catalogs: readonly Catalog[];
  readonly groups: readonly ResourceGroup[];
}

const bootstrapSchema = z.strictObject({
  catalogs: z.array(catalogSchema).default([]),
  groups: z.array(resourceGroupSchema).default([]),
});

/** Parses the YAML text; a bad entry is a `ValidationError` naming it (`groups[1].cpu`). */
export function parseBootstrap(text: string, source = 'bootstrap file'): Bootstrap {
  let value: unknown;
  try {
    value = parse(text) ?? {};
  } catch (error) {
    throw new ValidationError(source, [
      { path: '', message: `not valid YAML: ${(error as Error).message}`, code: 'yaml' },
    ]);
  }
  const result = bootstrapSchema.safeParse(value);
  if (!result.success)
    throw new ValidationError(source, zodIssues(result.error), { cause: result.error });
  const { catalogs, groups } = result.data;
  const problems: { path: string; message: string; code: string }[] = [];
  const seen = new Map<string, number>();
  groups.forEach((group, index) => {
    const other = seen.get(group.catalog);
    if (other !== undefined) {
      problems.push({
        path: `groups[${index}].catalog`,
        message: `catalog "${group.catalog}" already has group groups[${other}]: one group per catalog`,
        code: 'custom',
      });
    }
    seen.set(group.catalog, index);
  });
  if (problems.length > 0) throw new ValidationError(source, problems);
  return { catalogs, groups };
}

/**
 * What exists but the file does not list. Start-up leaves these alone (removal is an API
 * call that drains first, see docs/provisioner.md) and names them in a log line, so that a
 * removal from the file that was meant as a delete is easy to spot.
 */
export function notInBootstrap(
  bootstrap: Bootstrap,
  existing: { catalogs: readonly string[]; groups: readonly string[] },
): { catalogs: string[]; groups: string[] } {
  const listedCatalogs = new Set(bootstrap.catalogs.map((catalog) => catalog.name));
  const listedGroups = new Set(bootstrap.groups.map((group) => group.name));
  return {
    catalogs: existing.catalogs.filter((name) => !listedCatalogs.has(name)).sort(),
    groups: existing.groups.filter((name) => !listedGroups.has(name)).sort(),
  };
}
