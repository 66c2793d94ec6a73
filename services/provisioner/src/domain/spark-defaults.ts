import { catalogSparkConf } from '@icepack/types';
import type { Catalog, ResourceGroup } from '@icepack/types';
import { UnprocessableError } from './errors.ts';

/**
 * `spark-defaults.conf` entries for a group's jobs: the Iceberg catalog (REST, named like
 * the Icepack catalog), the catalog's non-secret properties, and the group's `sparkConf`.
 * Credentials are not here: the job resolves the catalog's secret reference itself.
 */
function sparkDefaults(group: ResourceGroup, catalog: Catalog): Record<string, string> {
  return {
    'spark.sql.extensions': 'org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions',
    ...catalogSparkConf(catalog),
    ...group.spark.sparkConf,
  };
}

const LINE_BREAK = /[\r\n]/;

/**
 * The text of `spark-defaults.conf`: one `key value` line per entry. A CR or LF in a key or
 * value would end its line and start one of the writer's choosing (say
 * `spark.driver.extraJavaOptions …`), which Java's properties reader takes as an entry of its
 * own: refused, naming the key (not the value, which a reader of the group's status need not
 * see).
 */
export function sparkDefaultsConf(group: ResourceGroup, catalog: Catalog): string {
  const lines = Object.entries(sparkDefaults(group, catalog)).map(([key, value]) => {
    if (LINE_BREAK.test(key)) {
      throw new UnprocessableError(
        `spark-defaults.conf: the key ${JSON.stringify(key)} contains a line break (CR or LF)`,
      );
    }
    if (LINE_BREAK.test(value)) {
      throw new UnprocessableError(
        `spark-defaults.conf: the value of ${key} contains a line break (CR or LF); change it in catalog ${catalog.name} or resource group ${group.name}`,
      );
    }
    return `${key} ${value}`;
  });
  return `${lines.join('\n')}\n`;
}
