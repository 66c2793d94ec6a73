import { z } from 'zod';

const HOW_TO_REFERENCE =
  'secrets are referenced, never inlined: use {"env": "VAR_NAME"}, {"file": "/path"} or {"secret": {"name": "k8s-secret", "key": "key"}}';

/** A reference to a secret held elsewhere; Icepack never stores or logs the value. */
export const secretRefSchema = z
  .unknown()
  .superRefine((value, ctx) => {
    if (typeof value === 'string' || typeof value === 'number') {
      ctx.addIssue({
        code: 'custom',
        message: `inline secret value rejected; ${HOW_TO_REFERENCE}`,
        continue: false,
      });
    }
  })
  .pipe(
    z.union(
      [
        z.strictObject({
          env: z
            .string()
            .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'expected an environment variable name' }),
        }),
        z.strictObject({
          file: z
            .string()
            .startsWith('/', { error: 'expected an absolute file path' })
            .refine((path) => !path.split('/').some((part) => part === '..' || part === '.'), {
              error: 'expected a normalised path without "." or ".." segments',
            }),
        }),
        z.strictObject({
          secret: z.strictObject({
            // Kubernetes Secret names are DNS-1123 subdomains; keys are [-._a-zA-Z0-9]+.
            // Both become path segments where the chart mounts Secrets, so no `..`, no `/`.
            name: z
              .string()
              .max(253)
              .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, {
                error: 'expected a Kubernetes Secret name (DNS-1123 subdomain)',
              }),
            key: z
              .string()
              .max(253)
              .regex(/^[-._a-zA-Z0-9]+$/, { error: 'expected a Secret key ([-._a-zA-Z0-9]+)' })
              .refine((key) => key !== '.' && key !== '..', {
                error: 'expected a Secret key, not "." or ".."',
              }),
          }),
        }),
      ],
      { error: `expected a secret reference; ${HOW_TO_REFERENCE}` },
    ),
  );
export type SecretRef =
  | { readonly env: string }
  | { readonly file: string }
  | { readonly secret: { readonly name: string; readonly key: string } };

// Property keys that carry a credential in Iceberg/Hadoop/cloud configs: `credential`,
// `token`, `s3.secret-access-key`, `s3.session-token`, `adls.sas-token.*`, `*password*`,
// REST headers that authenticate (`header.Authorization`, `header.Cookie`, `header.X-Api-Key`)
// and Azure shared keys (`adls.auth.shared-key.account.key`,
// `fs.azure.account.key.<account>.dfs.core.windows.net`). The one deny list: properties,
// Spark conf, ConfigMaps and logs all use it.
const SECRET_PROPERTY_KEY =
  /secret|password|passwd|sas-token|private-key|account\.key|(^|\.)header\.(authorization|proxy-authorization|cookie|x-api-key|api-key)$|(^|[._-])(credential|credentials|token|api-key|apikey)$/i;

/**
 * Spark's `spark.redaction.regex` for Icepack's jobs: Spark's default
 * (`(?i)secret|password|token|access[.]key`) plus what the deny list above covers, so the
 * OAuth `credential` the job sets on its catalog is redacted in the UI, event log and logs.
 */
export const SPARK_REDACTION_REGEX =
  '(?i)secret|password|passwd|token|access[.]key|account[.]key|credential|authorization|cookie|api-?key|private[.-]key';

/** True for a config key whose value would be a secret. */
export function looksLikeSecretKey(key: string): boolean {
  return SECRET_PROPERTY_KEY.test(key);
}

/**
 * True for a URL that carries a credential: a password (`scheme://user:pass@host/`), or any
 * user in an http(s) URL (`https://TOKEN@host/`, a token passed as the user). A user alone in
 * a storage location is a name, not a secret: ADLS and Azure Blob locations are
 * `abfss://container@account.dfs.core.windows.net/…`.
 */
export function hasUrlCredentials(value: string): boolean {
  try {
    const url = new URL(value.trim());
    if (url.password !== '') return true;
    return url.username !== '' && (url.protocol === 'http:' || url.protocol === 'https:');
  } catch {
    return false;
  }
}

/** The message for a URL that carries credentials; never echoes the value. */
export const URL_CREDENTIALS_MESSAGE = `holds credentials in the URL (user:password@); ${HOW_TO_REFERENCE}`;

/** Refinement for a string map that must not hold secrets (catalog properties, Spark conf). */
export function rejectInlineSecrets(map: Record<string, string>, ctx: z.RefinementCtx): void {
  for (const [key, value] of Object.entries(map)) {
    if (looksLikeSecretKey(key)) {
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message: `looks like a secret; put it in the catalog's auth as a reference (${HOW_TO_REFERENCE})`,
      });
    } else if (hasUrlCredentials(value)) {
      ctx.addIssue({ code: 'custom', path: [key], message: URL_CREDENTIALS_MESSAGE });
    }
  }
}
