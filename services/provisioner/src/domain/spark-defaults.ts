import type { Catalog, ResourceGroup } from '@icepack/types';

/**
 * `spark-defaults.conf` entries for a group's jobs: the Iceberg catalog (REST, named like
 * the Icepack catalog), the catalog's non-secret properties, and the group's `sparkConf`.
 * Credentials are not here: the job resolves the catalog's secret reference itself.
 */
export function sparkDefaults(group: ResourceGroup, catalog: Catalog): Record<string, string> {
  const prefix = `spark.sql.catalog.${catalog.name}`;
  const conf: Record<string, string> = {
    'spark.sql.extensions': 'org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions',
    [prefix]: 'org.apache.iceberg.spark.SparkCatalog',
    [`${prefix}.type`]: 'rest',
    [`${prefix}.uri`]: catalog.uri,
  };
  if (catalog.warehouse !== undefined) conf[`${prefix}.warehouse`] = catalog.warehouse;
  for (const [key, value] of Object.entries(catalog.properties)) conf[`${prefix}.${key}`] = value;
  for (const [key, value] of Object.entries(group.spark.sparkConf)) conf[key] = value;
  return conf;
}
