import { JOB_CREDENTIAL_VARIABLES } from './job-credentials.ts';

/**
 * What a local Spark job inherits from the dispatcher's environment: an allow-list. Pure.
 *
 * The dispatcher's environment holds its own secrets (`ICEPACK_REDIS_PASSWORD`,
 * `ICEPACK_KAFKA_SASL_PASSWORD`, `ICEPACK_API_TOKEN`, other catalogs' `ICEPACK_SECRET_*`), none
 * of which a maintenance job needs. A job gets only what runs Spark and Python and reaches
 * storage — the process basics, Java, Spark, Hadoop and Python settings, the cloud SDKs'
 * default credential chains (object storage), proxies and CA bundles, OpenTelemetry's
 * exporter settings — plus the names an operator adds (`ICEPACK_LOCAL_JOB_ENV`). Its catalog
 * credential is never inherited: the runner adds the job's own (job-credentials.ts).
 */
const ALLOWED_NAMES: ReadonlySet<string> = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TMPDIR',
  'TERM',
  'HOSTNAME',
  'JAVA_HOME',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'REQUESTS_CA_BUNDLE',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'ICEPACK_SPARK_LOG_LEVEL',
]);

const ALLOWED_PREFIXES: readonly string[] = [
  'LC_',
  'SPARK_',
  'PYSPARK_',
  'PYTHON',
  'HADOOP_',
  'AWS_',
  'AZURE_',
  'OTEL_',
];

/** Names an operator may add: a plain environment variable name, never a job credential. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export type ExtraJobEnv =
  | { readonly ok: true; readonly names: readonly string[] }
  | { readonly ok: false; readonly problem: string };

/** Checks the operator's extra names (`ICEPACK_LOCAL_JOB_ENV`): each must be a plain name. */
export function extraJobEnvNames(names: readonly string[]): ExtraJobEnv {
  for (const name of names) {
    if (!NAME.test(name))
      return { ok: false, problem: `ICEPACK_LOCAL_JOB_ENV: "${name}" is not a variable name` };
    if (JOB_CREDENTIAL_VARIABLES.includes(name))
      return {
        ok: false,
        problem: `ICEPACK_LOCAL_JOB_ENV: ${name} is the job's catalog credential, which comes only from the catalog's auth`,
      };
  }
  return { ok: true, names };
}

export function inheritedByLocalJob(name: string, extra: readonly string[] = []): boolean {
  if (JOB_CREDENTIAL_VARIABLES.includes(name)) return false;
  return (
    ALLOWED_NAMES.has(name) ||
    extra.includes(name) ||
    ALLOWED_PREFIXES.some((prefix) => name.startsWith(prefix))
  );
}

/** The part of `parent` (the dispatcher's environment) a local job inherits. */
export function localJobEnvironment(
  parent: Readonly<Record<string, string | undefined>>,
  extra: readonly string[] = [],
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent))
    if (value !== undefined && inheritedByLocalJob(name, extra)) env[name] = value;
  return env;
}
