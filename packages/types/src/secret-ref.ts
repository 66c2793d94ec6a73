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
          file: z.string().startsWith('/', { error: 'expected an absolute file path' }),
        }),
        z.strictObject({
          secret: z.strictObject({ name: z.string().min(1), key: z.string().min(1) }),
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
// `token`, `s3.secret-access-key`, `s3.session-token`, `adls.sas-token.*`, `*password*`.
const SECRET_PROPERTY_KEY =
  /secret|password|passwd|sas-token|private-key|(^|[._-])(credential|credentials|token|api-key|apikey)$/i;

/** True for a config key whose value would be a secret. */
export function looksLikeSecretKey(key: string): boolean {
  return SECRET_PROPERTY_KEY.test(key);
}

/** Refinement for a string map that must not hold secrets (catalog properties, Spark conf). */
export function rejectInlineSecrets(map: Record<string, string>, ctx: z.RefinementCtx): void {
  for (const key of Object.keys(map)) {
    if (looksLikeSecretKey(key)) {
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message: `looks like a secret; put it in the catalog's auth as a reference (${HOW_TO_REFERENCE})`,
      });
    }
  }
}
