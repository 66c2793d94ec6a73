import { catalogSparkConf, SPARK_REDACTION_REGEX, type CatalogAuth } from '@icepack/types';

/** The catalog as a run request carries it: secret references only, never values. */
export interface JobCatalog {
  readonly name: string;
  readonly uri: string;
  readonly warehouse?: string | undefined;
  readonly auth?: CatalogAuth | undefined;
  readonly properties?: Readonly<Record<string, string>> | undefined;
}

/**
 * The Spark conf every job gets for its catalog, whichever runner starts it (the
 * SparkApplication's `sparkConf`, the local runner's `--conf`): the catalog as
 * `catalogSparkConf` has it — URI, warehouse, OAuth2 server URI and scope, and the catalog's
 * properties (`s3.endpoint`, `s3.path-style-access`, `client.region`, …), none of which may
 * be a secret (the catalog schema refuses secret-looking keys) — then the group's own
 * `sparkConf`, then `spark.redaction.regex` last, so a group cannot weaken it. The credential
 * is not here: it reaches the job through its environment (`job-credentials.ts`). Pure.
 */
export function jobSparkConf(
  catalog: JobCatalog,
  groupConf: Readonly<Record<string, string>>,
): Record<string, string> {
  return {
    ...catalogSparkConf({
      name: catalog.name,
      uri: catalog.uri,
      warehouse: catalog.warehouse,
      auth: catalog.auth ?? { type: 'none' },
      properties: catalog.properties ?? {},
    }),
    ...groupConf,
    'spark.redaction.regex': SPARK_REDACTION_REGEX,
  };
}
