import {
  baseConfigSchema,
  catalogAccessConfig,
  duration,
  secret,
  sparkSettingsConfig,
  url,
} from '@icepack/runtime';
import { z } from 'zod';

/** Environment variables of the provisioner; see README.md. */
export const configSchema = baseConfigSchema('provisioner')
  .extend({
    ...catalogAccessConfig,
    ...sparkSettingsConfig,
    /** Bearer token the API requires. */
    ICEPACK_API_TOKEN: secret(z.string().min(16, 'expected at least 16 characters')),
    /** `kubernetes` (namespaces, quotas, RBAC) or `local` (budgets on this machine). */
    ICEPACK_PROVISIONER_MODE: z.enum(['kubernetes', 'local']).default('kubernetes'),
    /** API server URL; unset → in-cluster service account or KUBECONFIG. */
    ICEPACK_KUBE_API_URL: url(['http', 'https']).optional(),
    /** Bearer token for ICEPACK_KUBE_API_URL. */
    ICEPACK_KUBE_TOKEN: secret(z.string().min(1)).optional(),
    /**
     * This installation's id, written on every namespace it creates (annotation
     * `icepack.io/installation`); only namespaces carrying it are changed or deleted. Required
     * in kubernetes mode; unique per Icepack installation on a cluster.
     */
    ICEPACK_INSTALLATION_ID: z
      .string()
      .min(1)
      .max(253)
      .regex(
        /^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$/,
        'expected letters, digits and - _ . / inside',
      )
      .optional(),
    /** YAML file of catalogs and groups applied at start-up. */
    ICEPACK_BOOTSTRAP_FILE: z.string().min(1).optional(),
    ICEPACK_RECONCILE_INTERVAL: duration().default(60_000),
    ICEPACK_DRAIN_TIMEOUT: duration().default(30 * 60_000),
    ICEPACK_CATALOG_PROBE_TIMEOUT: duration().default(5_000),
    /** Redis key prefix of the provisioner's state. */
    ICEPACK_PROVISIONER_KEY_PREFIX: z.string().min(1).default('icepack:provisioner'),
    /** Local mode: cpu to hand out (default this machine's cores). */
    ICEPACK_LOCAL_CPU: z.string().optional(),
    /** Local mode: memory to hand out (default this machine's memory). */
    ICEPACK_LOCAL_MEMORY: z.string().optional(),
  })
  .superRefine((config, ctx) => {
    if (
      config.ICEPACK_PROVISIONER_MODE === 'kubernetes' &&
      config.ICEPACK_INSTALLATION_ID === undefined
    )
      ctx.addIssue({
        code: 'custom',
        path: ['ICEPACK_INSTALLATION_ID'],
        message: 'required in kubernetes mode',
      });
    // A capacity of one machine needs both figures; one alone would be silently ignored.
    const cpu = config.ICEPACK_LOCAL_CPU !== undefined;
    const memory = config.ICEPACK_LOCAL_MEMORY !== undefined;
    if (cpu !== memory)
      ctx.addIssue({
        code: 'custom',
        path: [cpu ? 'ICEPACK_LOCAL_CPU' : 'ICEPACK_LOCAL_MEMORY'],
        message: `needs ${cpu ? 'ICEPACK_LOCAL_MEMORY' : 'ICEPACK_LOCAL_CPU'} as well (both or neither)`,
      });
  });

export type Config = z.output<typeof configSchema>;
