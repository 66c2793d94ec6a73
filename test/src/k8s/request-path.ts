import type { ResourceType } from './resource-types.ts';
import { findResourceType } from './resource-types.ts';

/** What a resource URL addresses. */
export interface ResourcePath {
  readonly type: ResourceType;
  /** Absent for cluster-scoped kinds and for lists across all namespaces. */
  readonly namespace: string | undefined;
  /** Absent for collections. */
  readonly name: string | undefined;
  readonly subresource: 'status' | undefined;
  /** The legacy `/watch/` prefix was used. */
  readonly watchPrefix: boolean;
}

/**
 * Parses `/api/v1/...` and `/apis/{group}/{version}/...` paths:
 * `[namespaces/{ns}/]{plural}[/{name}[/status]]`, plus the legacy `/watch/` prefix.
 * Returns undefined for paths the fake does not serve.
 */
export function parseResourcePath(pathname: string): ResourcePath | undefined {
  const parts = pathname
    .split('/')
    .filter((part) => part !== '')
    .map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    version = parts[1] ?? '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1] ?? '';
    version = parts[2] ?? '';
    rest = parts.slice(3);
  } else return undefined;
  const watchPrefix = rest[0] === 'watch';
  if (watchPrefix) rest = rest.slice(1);

  let namespace: string | undefined;
  // `namespaces/{ns}/{plural}...` is namespaced; `namespaces[/{name}[/status]]` is the Namespace kind itself.
  if (
    rest[0] === 'namespaces' &&
    rest.length >= 3 &&
    rest[2] !== 'status' &&
    rest[2] !== 'finalize'
  ) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [plural = '', name, subresource, ...extra] = rest;
  if (extra.length > 0) return undefined;
  if (subresource !== undefined && subresource !== 'status') return undefined;
  const type = findResourceType(group, version, plural);
  if (type === undefined) return undefined;
  if (namespace !== undefined && !type.namespaced) return undefined;
  // A namespaced kind addressed without a namespace is only a list across namespaces.
  if (namespace === undefined && type.namespaced && name !== undefined) return undefined;
  return {
    type,
    namespace,
    name,
    subresource: subresource === 'status' ? 'status' : undefined,
    watchPrefix,
  };
}
