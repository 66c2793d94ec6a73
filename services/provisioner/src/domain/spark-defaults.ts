import { catalogSparkConf, CatalogAuthType, formatPath } from '@icepack/types';
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
 * Whether `spark-defaults.conf` can carry `text` as a key or a value: not with a CR or LF,
 * which would end its line and start one of the writer's choosing (say
 * `spark.driver.extraJavaOptions …`) that Java's properties reader takes as an entry of its
 * own. The one rule for the file's writer ({@link sparkDefaultsConf}) and for the API, which
 * refuses such a catalog or group up front ({@link catalogSparkDefaultsProblems},
 * {@link groupSparkDefaultsProblems}).
 */
export function fitsSparkDefaults(text: string): boolean {
  return !LINE_BREAK.test(text);
}

/** A field the API refuses (400): `path` as `ValidationIssue` has it. */
export interface SparkDefaultsProblem {
  readonly path: string;
  readonly message: string;
}

const CANNOT_CARRY = 'contains a line break (CR or LF), which spark-defaults.conf cannot carry';

/** Problems of a map whose keys and values both go into the file (catalog properties, sparkConf). */
function mapProblems(
  map: Readonly<Record<string, string>>,
  at: readonly PropertyKey[],
): SparkDefaultsProblem[] {
  return Object.entries(map).flatMap(([key, value]) => {
    const path = formatPath([...at, key]);
    if (!fitsSparkDefaults(key)) return [{ path, message: `the key ${CANNOT_CARRY}` }];
    return fitsSparkDefaults(value) ? [] : [{ path, message: `the value ${CANNOT_CARRY}` }];
  });
}

/**
 * The catalog's fields that `catalogSparkConf` writes into `spark-defaults.conf` and the file
 * cannot carry (the name cannot: it is a DNS label). The value is never repeated.
 */
export function catalogSparkDefaultsProblems(catalog: Catalog): SparkDefaultsProblem[] {
  const oauth2 = catalog.auth.type === CatalogAuthType.oauth2 ? catalog.auth : undefined;
  const fields: [string, string | undefined][] = [
    ['uri', catalog.uri],
    ['warehouse', catalog.warehouse],
    ['auth.serverUri', oauth2?.serverUri],
    ['auth.scope', oauth2?.scope],
  ];
  return [
    ...fields
      .filter(([, value]) => value !== undefined && !fitsSparkDefaults(value))
      .map(([path]) => ({ path, message: CANNOT_CARRY })),
    ...mapProblems(catalog.properties, ['properties']),
  ];
}

/** The group's `sparkConf` entries that `spark-defaults.conf` cannot carry. */
export function groupSparkDefaultsProblems(group: ResourceGroup): SparkDefaultsProblem[] {
  return mapProblems(group.spark.sparkConf, ['spark', 'sparkConf']);
}

/**
 * A key or value as `Properties.load` reads it back, escaped as `java.util.Properties.store`
 * escapes: `\` → `\\` everywhere (else a trailing `\` joins the next line and `\t`, `\u…`
 * are escapes); tab and form feed → `\t`, `\f`; in a key also `=`, `:`, `#`, `!` and space →
 * `\=`, `\:`, `\#`, `\!`, `\ ` (a key ends at the first unescaped `=`, `:` or whitespace, and
 * a line starting with `#` or `!` is a comment); in a value a leading space, `=` or `:` →
 * `\ `, `\=`, `\:` (`load` skips the separator — whitespace, then one `=` or `:` — and the
 * whitespace after it). Unlike `store`, a value's later `=`, `:`, `#`, `!` stay as they are:
 * `load` reads them literally, and URIs stay readable. Spark loads the file with
 * `Properties.load` over a UTF-8 reader (`Utils.getPropertiesFromFile`), so non-ASCII text is
 * written as is (no `\uXXXX`, as `store(Writer)`); it then trims each value's leading and
 * trailing whitespace itself, escaped or not. CR and LF never get here: {@link fitsSparkDefaults}.
 */
function escapedForProperties(text: string, key: boolean): string {
  return text.replace(/[\\\t\f=:#! ]/g, (char, offset: number) => {
    if (char === '\t') return '\\t';
    if (char === '\f') return '\\f';
    if (char === '\\') return '\\\\';
    if (key || (offset === 0 && (char === ' ' || char === '=' || char === ':'))) return `\\${char}`;
    return char;
  });
}

/**
 * The text of `spark-defaults.conf`: one `key value` line per entry, each escaped as
 * `Properties.store` would ({@link escapedForProperties}). A key or value with a CR or LF is
 * refused ({@link fitsSparkDefaults}), naming the key (not the value, which a reader of the
 * group's status need not see).
 */
export function sparkDefaultsConf(group: ResourceGroup, catalog: Catalog): string {
  const lines = Object.entries(sparkDefaults(group, catalog)).map(([key, value]) => {
    if (!fitsSparkDefaults(key)) {
      throw new UnprocessableError(
        `spark-defaults.conf: the key ${JSON.stringify(key)} contains a line break (CR or LF)`,
      );
    }
    if (!fitsSparkDefaults(value)) {
      throw new UnprocessableError(
        `spark-defaults.conf: the value of ${key} contains a line break (CR or LF); change it in catalog ${catalog.name} or resource group ${group.name}`,
      );
    }
    return `${escapedForProperties(key, true)} ${escapedForProperties(value, false)}`;
  });
  return `${lines.join('\n')}\n`;
}
