import { z } from 'zod';

const amount = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/**
 * How much of a catalog's resource group (its namespace quota, or its local budget) is in
 * use, as the dispatcher that serves the catalog sees it. The dispatcher holds the rights to
 * know it (it watches the namespace's ResourceQuota; local claims are its own) and writes it
 * under `quotaUseKey(catalog)` every `QUOTA_USE_EVERY_MS`, expiring after three misses; the
 * console reads it (the planner needs no Kubernetes right). Figures only, never a secret.
 */
export const quotaUseSchema = z.object({
  /** The resource group: the catalog's namespace. */
  group: z.string().min(1).max(253),
  /** `budget`: local runs on this machine; `resource-quota`: the namespace's ResourceQuota. */
  source: z.enum(['budget', 'resource-quota']),
  cpu: z.object({ usedMillicores: amount, hardMillicores: amount.optional() }),
  memory: z.object({ usedBytes: amount, hardBytes: amount.optional() }),
  /** When it was read (ISO-8601). */
  at: z.iso.datetime(),
});
export type QuotaUse = z.output<typeof quotaUseSchema>;

/** How often a dispatcher writes a catalog's quota use. */
export const QUOTA_USE_EVERY_MS = 15_000;

/** The Redis key of a catalog's quota use. */
export function quotaUseKey(catalog: string): string {
  return `icepack:dispatcher:quota-use:${catalog}`;
}
