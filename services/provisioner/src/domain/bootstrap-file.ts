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
