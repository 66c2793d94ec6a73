import type { Logger } from '@icepack/runtime';
import { notInBootstrap, type Bootstrap } from '../domain/bootstrap-file.ts';
import type { CatalogService } from './catalog-service.ts';
import type { GroupService } from './group-service.ts';

/**
 * Upserts the declarative file's catalogs, then creates its groups. An entry that cannot
 * be applied (no capacity, catalog bound elsewhere) is logged and the rest goes on. What
 * exists but is not in the file is left alone and named in a warning.
 */
export async function applyBootstrap(
  bootstrap: Bootstrap,
  catalogs: CatalogService,
  groups: GroupService,
  logger: Logger,
): Promise<{ applied: number; failed: number }> {
  let applied = 0;
  let failed = 0;
  for (const catalog of bootstrap.catalogs) {
    try {
      await catalogs.upsert(catalog);
      applied += 1;
    } catch (error) {
      failed += 1;
      logger.error({ err: error, catalog: catalog.name }, 'bootstrap: catalog not applied');
    }
  }
  for (const group of bootstrap.groups) {
    try {
      await groups.apply(group);
      applied += 1;
    } catch (error) {
      failed += 1;
      logger.error({ err: error, group: group.name }, 'bootstrap: resource group not applied');
    }
  }
  logger.info({ applied, failed }, 'bootstrap file applied');
  const unlisted = notInBootstrap(bootstrap, {
    catalogs: (await catalogs.list()).map((catalog) => catalog.name),
    groups: (await groups.list()).map((group) => group.name),
  });
  if (unlisted.catalogs.length > 0 || unlisted.groups.length > 0) {
    logger.warn(
      unlisted,
      'bootstrap: these exist but are not in the file; kept (delete them through the API to remove them)',
    );
  }
  return { applied, failed };
}
