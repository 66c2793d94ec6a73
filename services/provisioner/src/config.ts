import { baseConfigSchema, catalogAccessConfig, duration, secret, url } from '@icepack/runtime';
import { z } from 'zod';

/** Environment variables of the provisioner; see README.md. */
export const configSchema = baseConfigSchema('provisioner').extend({
  ...catalogAccessConfig,
  /** Bearer token the API requires. */
  ICEPACK_API_TOKEN: secret(z.string().min(16, 'expected at least 16 characters')),
  /** `kubernetes` (namespaces, quotas, RBAC) or `local` (budgets on this machine). */
  ICEPACK_PROVISIONER_MODE: z.enum(['kubernetes', 'local']).default('kubernetes'),
  /** API server URL; unset → in-cluster service account or KUBECONFIG. */
  ICEPACK_KUBE_API_URL: url(['http', 'https']).optional(),
  /** Bearer token for ICEPACK_KUBE_API_URL. */
  ICEPACK_KUBE_TOKEN: secret(z.string().min(1)).optional(),
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
});

export type Config = z.output<typeof configSchema>;
