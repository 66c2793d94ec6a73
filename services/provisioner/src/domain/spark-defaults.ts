import { catalogSparkConf } from '@icepack/types';
import type { Catalog, ResourceGroup } from '@icepack/types';

/**
 * `spark-defaults.conf` entries for a group's jobs: the Iceberg catalog (REST, named like
 * the Icepack catalog), the catalog's non-secret properties, and the group's `sparkConf`.
 * Credentials are not here: the job resolves the catalog's secret reference itself.
 */
export function sparkDefaults(group: ResourceGroup, catalog: Catalog): Record<string, string> {
  return {
    'spark.sql.extensions': 'org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions',
    ...catalogSparkConf(catalog),
    ...group.spark.sparkConf,
  };
}
