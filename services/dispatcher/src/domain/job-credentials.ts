import { CatalogAuthType, type CatalogAuth, type SecretRef } from '@icepack/types';

/**
 * How a job gets its catalog credential, on Kubernetes and locally. Pure.
 *
 * The job reads it from its environment (`ICEPACK_CATALOG_TOKEN` → the catalog's `token`,
 * `ICEPACK_CATALOG_CREDENTIAL` → `credential`, docs/spark-job.md). In a pod that environment
 * may only *reference* a Secret of the pod's namespace (`secretKeyRef`): the value never
 * appears in the SparkApplication, the pod spec or anything Icepack stores.
 *
 * - `{secret: {name, key}}` (the Kubernetes form of a reference, ADR 0010) becomes that
 *   `secretKeyRef`: a Secret of that name must exist in the group's namespace.
 * - `{env}` and `{file}` name a variable or file of the dispatcher's own process, which a pod
 *   cannot see. They work only with the fallback Secret (`ICEPACK_SPARK_SECRET`, mounted with
 *   `envFrom` and expected to hold the `ICEPACK_CATALOG_*` keys); without it the job would
 *   run unauthenticated, so the task is refused naming the field instead.
 * - OAuth2 with a client id: Iceberg's `credential` is `<client id>:<client secret>`. The id is
 *   no secret; the pod gets the secret by reference as `ICEPACK_CATALOG_CLIENT_SECRET` and
 *   the credential as `<id>:$(ICEPACK_CATALOG_CLIENT_SECRET)`, which the kubelet expands
 *   (Kubernetes dependent environment variables), so the joined value exists only in the pod.
 */
export const JobSecretEnv = {
  token: 'ICEPACK_CATALOG_TOKEN',
  credential: 'ICEPACK_CATALOG_CREDENTIAL',
  clientSecret: 'ICEPACK_CATALOG_CLIENT_SECRET',
} as const;

export type JobEnvVar =
  | { readonly name: string; readonly value: string }
  | {
      readonly name: string;
      readonly valueFrom: {
        readonly secretKeyRef: { readonly name: string; readonly key: string };
      };
    };

export type JobCredentials =
  | { readonly ok: true; readonly env: readonly JobEnvVar[] }
  | { readonly ok: false; readonly problem: string };

function fromSecret(name: string, ref: { secret: { name: string; key: string } }): JobEnvVar {
  return { name, valueFrom: { secretKeyRef: { name: ref.secret.name, key: ref.secret.key } } };
}

/** `$` starts a reference in a Kubernetes env value; `$$` is a literal `$`. */
const literal = (text: string): string => text.replaceAll('$', () => '$$');

/**
 * The one mapping of `catalog.auth` to the job's credential variable, for both runners: which
 * variable (`token` → `ICEPACK_CATALOG_TOKEN`, OAuth2 → `ICEPACK_CATALOG_CREDENTIAL`), the
 * field that references its secret, and the OAuth2 client id that prefixes it (`<id>:<secret>`).
 */
interface CredentialSource {
  readonly variable: string;
  readonly field: string;
  readonly ref: SecretRef;
  readonly clientId?: string;
}

function credentialSource(auth: CatalogAuth): CredentialSource | undefined {
  switch (auth.type) {
    case CatalogAuthType.none:
      return undefined;
    case CatalogAuthType.bearer:
      return { variable: JobSecretEnv.token, field: 'auth.token', ref: auth.token };
    case CatalogAuthType.oauth2:
      return {
        variable: JobSecretEnv.credential,
        field: 'auth.clientSecret',
        ref: auth.clientSecret,
        ...(auth.clientId === undefined ? {} : { clientId: auth.clientId }),
      };
  }
}

/**
 * The driver's credential environment for `auth`. `fallbackSecret`: the name of the Secret
 * every job gets with `envFrom` (`ICEPACK_SPARK_SECRET`), if any.
 */
export function kubernetesJobCredentials(
  auth: CatalogAuth,
  fallbackSecret: string | undefined,
): JobCredentials {
  const source = credentialSource(auth);
  if (source === undefined) return { ok: true, env: [] };
  const { ref, field } = source;
  if (!('secret' in ref)) {
    if (fallbackSecret !== undefined) return { ok: true, env: [] };
    const named = 'env' in ref ? `variable ${ref.env}` : `file ${ref.file}`;
    return {
      ok: false,
      problem: `catalog ${field}: references the dispatcher's ${named}, which a Kubernetes job cannot read; reference a Secret of the group's namespace ({"secret": {"name": …, "key": …}}) or set ICEPACK_SPARK_SECRET`,
    };
  }
  if (source.clientId === undefined) return { ok: true, env: [fromSecret(source.variable, ref)] };
  return {
    ok: true,
    env: [
      fromSecret(JobSecretEnv.clientSecret, ref),
      {
        name: source.variable,
        value: `${literal(source.clientId)}:$(${JobSecretEnv.clientSecret})`,
      },
    ],
  };
}

/** Resolves a reference to its value; throws an error naming `field` when it cannot. */
export type ResolveJobSecret = (ref: SecretRef, field: string) => string;

export type LocalJobCredentials =
  | { readonly ok: true; readonly env: Readonly<Record<string, string>> }
  | { readonly ok: false; readonly problem: string };

/**
 * Every variable through which a job could pick up a catalog credential. The local job's
 * environment starts from the dispatcher's, so these are removed first: a job gets its own
 * catalog's credential or none, never one the dispatcher's environment happens to hold.
 */
export const JOB_CREDENTIAL_VARIABLES: readonly string[] = [
  JobSecretEnv.token,
  `${JobSecretEnv.token}_FILE`,
  JobSecretEnv.credential,
  `${JobSecretEnv.credential}_FILE`,
  JobSecretEnv.clientSecret,
];

/**
 * The local job's credential environment for `auth`, with the values resolved here (the
 * dispatcher's allow-listed sources, ADR 0010): they reach `spark-submit` only through its
 * environment, never its argv, the task file or the run's files. A reference that cannot be
 * resolved is a problem naming the field; the runner then launches nothing.
 */
export function localJobCredentials(
  auth: CatalogAuth,
  resolve: ResolveJobSecret,
): LocalJobCredentials {
  const source = credentialSource(auth);
  if (source === undefined) return { ok: true, env: {} };
  let secret: string;
  try {
    secret = resolve(source.ref, source.field);
  } catch (error) {
    return { ok: false, problem: `catalog ${(error as Error).message}` };
  }
  const value = source.clientId === undefined ? secret : `${source.clientId}:${secret}`;
  return { ok: true, env: { [source.variable]: value } };
}
