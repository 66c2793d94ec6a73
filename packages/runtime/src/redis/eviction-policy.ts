/**
 * The warning to log for a Redis `maxmemory-policy`, or undefined when it is safe. BullMQ
 * keeps jobs as keys; any policy but `noeviction` lets Redis delete them under memory
 * pressure — tasks silently lost.
 */
export function evictionPolicyWarning(policy: string | undefined): string | undefined {
  if (policy === undefined || policy === 'noeviction') return undefined;
  return `Redis maxmemory-policy is "${policy}": Redis may evict queued tasks under memory pressure; set it to "noeviction"`;
}
