import { posix } from 'node:path';
import { isIP } from 'node:net';
import type { Catalog, SecretRef } from '@icepack/types';

/**
 * Where catalog secret references may resolve from, and which catalog addresses may be
 * called. Pure: the adapters (`secretResolver`, `resolvedAddressProblem`) apply it to the
 * filesystem and DNS. See docs/security.md.
 */
export interface CatalogAccessPolicy {
  /** `{env}` references must name a variable starting with this. */
  readonly secretEnvPrefix: string;
  /** `{file}` references must be under this directory; `{secret}` resolves to `<dir>/<name>/<key>`. */
  readonly secretsDir: string;
  /** Allow link-local and cloud-metadata catalog addresses (tests, private setups). */
  readonly allowLinkLocal: boolean;
}

export const DEFAULT_SECRET_ENV_PREFIX = 'ICEPACK_SECRET_';
export const DEFAULT_SECRETS_DIR = '/var/run/secrets/icepack';

export const defaultCatalogAccessPolicy: CatalogAccessPolicy = {
  secretEnvPrefix: DEFAULT_SECRET_ENV_PREFIX,
  secretsDir: DEFAULT_SECRETS_DIR,
  allowLinkLocal: false,
};

/** One refused part of a catalog definition: `path` is the dotted field. */
export interface CatalogAccessProblem {
  readonly path: string;
  readonly message: string;
}

/** True when `path` (absolute, normalised) is `dir` or inside it. */
export function isInside(dir: string, path: string): boolean {
  const relative = posix.relative(posix.normalize(dir), posix.normalize(path));
  return relative !== '' && !relative.startsWith('..') && !posix.isAbsolute(relative);
}

/** The file a reference reads, or undefined for an `{env}` reference. */
export function secretRefPath(ref: SecretRef, policy: CatalogAccessPolicy): string | undefined {
  if ('env' in ref) return undefined;
  if ('file' in ref) return ref.file;
  return posix.join(policy.secretsDir, ref.secret.name, ref.secret.key);
}

/** Why a secret reference may not be resolved under the policy; undefined when it may. */
export function secretRefProblem(ref: SecretRef, policy: CatalogAccessPolicy): string | undefined {
  if ('env' in ref) {
    return ref.env.startsWith(policy.secretEnvPrefix) &&
      ref.env.length > policy.secretEnvPrefix.length
      ? undefined
      : `environment variable ${ref.env} is not allowed: secret variables must start with ${policy.secretEnvPrefix}`;
  }
  const path = secretRefPath(ref, policy) ?? '';
  if (path.split('/').includes('..') || !isInside(policy.secretsDir, path)) {
    return `${'file' in ref ? `file ${ref.file}` : `Secret ${ref.secret.name}/${ref.secret.key}`} is outside the secrets directory ${policy.secretsDir}`;
  }
  return undefined;
}

// Hosts that answer with the machine's cloud credentials whatever their address.
const METADATA_HOSTS = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.internal',
]);

// IPv6 metadata and credential endpoints, canonical: AWS IMDS, AWS EKS Pod Identity, GCE.
const METADATA_IPV6 = new Set(['fd00:ec2::254', 'fd00:ec2::23', 'fd20:ce::254']);

/** An IPv6 address as URLs write it (`fd00:ec2:0:0::254` → `fd00:ec2::254`). */
function canonicalIpv6(ipv6: string): string {
  try {
    return new URL(`http://[${ipv6}]/`).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return ipv6;
  }
}

function ipv4Parts(address: string): number[] | undefined {
  const parts = address.split('.').map(Number);
  return parts.length === 4 && parts.every((p) => Number.isInteger(p) && p >= 0 && p <= 255)
    ? parts
    : undefined;
}

/**
 * The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`), in any spelling:
 * dotted, or the hex form URLs normalise it to (`new URL('http://[::ffff:169.254.169.254]')`
 * has the host `[::ffff:a9fe:a9fe]`). Undefined for any other address.
 */
function ipv4Mapped(ipv6: string): string | undefined {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(ipv6);
  if (dotted?.[1] !== undefined) return dotted[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonicalIpv6(ipv6));
  if (hex?.[1] === undefined || hex[2] === undefined) return undefined;
  const high = Number.parseInt(hex[1], 16);
  const low = Number.parseInt(hex[2], 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** Why an IP address may not be called (link-local, cloud metadata); undefined when it may. */
export function addressProblem(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '').toLowerCase();
  const family = isIP(bare);
  if (family === 4) {
    const [a, b] = ipv4Parts(bare) ?? [];
    if (a === 169 && b === 254) return `${bare} is a link-local address (169.254.0.0/16)`;
    if (bare === '100.100.100.200') return `${bare} is a cloud metadata address`;
    return undefined;
  }
  if (family === 6) {
    const mapped = ipv4Mapped(bare);
    if (mapped !== undefined) return addressProblem(mapped);
    const first = Number.parseInt(bare.split(':')[0] || '0', 16);
    if ((first & 0xffc0) === 0xfe80) return `${bare} is a link-local address (fe80::/10)`;
    if (METADATA_IPV6.has(canonicalIpv6(bare))) return `${bare} is a cloud metadata address`;
    return undefined;
  }
  return undefined;
}

/** Why a URL's host may not be called, judged on its name or literal address. */
export function hostProblem(host: string): string | undefined {
  const name = host.replace(/\.$/, '').toLowerCase();
  if (METADATA_HOSTS.has(name)) return `${name} is a cloud metadata host`;
  return addressProblem(name);
}

function uriProblem(uri: string): string | undefined {
  let host: string;
  try {
    const url = new URL(uri);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    host = url.hostname;
  } catch {
    return undefined; // The schema reports malformed URLs.
  }
  const problem = hostProblem(host);
  return problem === undefined
    ? undefined
    : `${problem}; refused (set ICEPACK_CATALOG_ALLOW_LINK_LOCAL=true to allow)`;
}

/**
 * Why a catalog property's value may not be used: an http(s) URL (`s3.endpoint`,
 * `s3.signer.uri`, `oauth2-server-uri`, …) on a link-local or metadata address, unless the
 * policy allows them; undefined when it may. One rule for the properties a catalog is
 * registered with and for those its answers carry (`GET /v1/config`, a table's `config`,
 * vended credentials), which the services' storage reads take (`answerPropertyProblem` of
 * `@icepack/iceberg`'s `RestCatalogOptions`). Names the host, never the whole value.
 */
export function propertyValueProblem(
  value: string,
  policy: CatalogAccessPolicy,
): string | undefined {
  return policy.allowLinkLocal ? undefined : uriProblem(value.trim());
}

/**
 * Every part of a catalog definition the policy refuses: secret references from outside
 * the allowed sources, catalog and token-endpoint URIs on link-local or metadata addresses —
 * also as properties, which the Spark job's catalog conf takes last (`oauth2-server-uri`,
 * `s3.endpoint`, `s3.signer.uri`, …): every property whose value is an http(s) URL.
 */
export function catalogAccessProblems(
  catalog: Catalog,
  policy: CatalogAccessPolicy,
): CatalogAccessProblem[] {
  const problems: CatalogAccessProblem[] = [];
  const refs: [string, SecretRef][] =
    catalog.auth.type === 'bearer'
      ? [['auth.token', catalog.auth.token]]
      : catalog.auth.type === 'oauth2'
        ? [['auth.clientSecret', catalog.auth.clientSecret]]
        : [];
  for (const [path, ref] of refs) {
    const message = secretRefProblem(ref, policy);
    if (message !== undefined) problems.push({ path, message });
  }
  const uris: [string, string | undefined][] = [
    ['uri', catalog.uri],
    ['auth.serverUri', catalog.auth.type === 'oauth2' ? catalog.auth.serverUri : undefined],
    ...Object.entries(catalog.properties).map(([key, value]): [string, string] => [
      `properties.${key}`,
      value,
    ]),
  ];
  for (const [path, uri] of uris) {
    const message = uri === undefined ? undefined : propertyValueProblem(uri, policy);
    if (message !== undefined) problems.push({ path, message });
  }
  return problems;
}
