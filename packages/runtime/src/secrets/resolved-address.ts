import { lookup } from 'node:dns/promises';
import { addressProblem, hostProblem } from './catalog-access-policy.ts';

/**
 * Why the URL's host may not be called once resolved (a name pointing at a link-local or
 * metadata address); undefined when it may, or when it does not resolve (the caller's
 * request then fails on its own).
 */
export async function resolvedAddressProblem(uri: string): Promise<string | undefined> {
  const host = new URL(uri).hostname.replace(/^\[|\]$/g, '');
  const named = hostProblem(host);
  if (named !== undefined) return named;
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host, { all: true });
  } catch {
    return undefined;
  }
  for (const { address } of addresses) {
    const problem = addressProblem(address);
    if (problem !== undefined) return `${host} resolves to ${problem}`;
  }
  return undefined;
}
