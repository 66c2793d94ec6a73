import { CatalogAuthType, type CatalogAuth } from '@icepack/types';

/**
 * How a Kubernetes job gets its catalog credential. Pure.
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
 * The driver's credential environment for `auth`. `fallbackSecret`: the name of the Secret
 * every job gets with `envFrom` (`ICEPACK_SPARK_SECRET`), if any.
 */
export function kubernetesJobCredentials(
  auth: CatalogAuth,
  fallbackSecret: string | undefined,
): JobCredentials {
  if (auth.type === CatalogAuthType.none) return { ok: true, env: [] };
  const [field, ref] =
    auth.type === CatalogAuthType.bearer
      ? ['auth.token', auth.token]
      : ['auth.clientSecret', auth.clientSecret];
  if (!('secret' in ref)) {
    if (fallbackSecret !== undefined) return { ok: true, env: [] };
    const named = 'env' in ref ? `variable ${ref.env}` : `file ${ref.file}`;
    return {
      ok: false,
      problem: `catalog ${field}: references the dispatcher's ${named}, which a Kubernetes job cannot read; reference a Secret of the group's namespace ({"secret": {"name": …, "key": …}}) or set ICEPACK_SPARK_SECRET`,
    };
  }
  if (auth.type === CatalogAuthType.bearer) {
    return { ok: true, env: [fromSecret(JobSecretEnv.token, ref)] };
  }
  if (auth.clientId === undefined) {
    return { ok: true, env: [fromSecret(JobSecretEnv.credential, ref)] };
  }
  return {
    ok: true,
    env: [
      fromSecret(JobSecretEnv.clientSecret, ref),
      {
        name: JobSecretEnv.credential,
        value: `${literal(auth.clientId)}:$(${JobSecretEnv.clientSecret})`,
      },
    ],
  };
}
