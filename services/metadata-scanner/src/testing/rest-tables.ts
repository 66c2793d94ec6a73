import type { TableId } from '@icepack/types';

/** Namespace path segment: levels joined by the unit separator (no prefix on the local server). */
const nsPath = (namespace: readonly string[]): string =>
  encodeURIComponent(namespace.join('\u001f'));

async function call(method: string, url: string, body?: unknown): Promise<Response> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok && response.status !== 409) {
    throw new Error(`${method} ${url} → ${response.status}: ${await response.text()}`);
  }
  return response;
}

/** Creates `namespace` and each of its parents (nested namespaces need their parents). */
export async function createNamespace(uri: string, namespace: readonly string[]): Promise<void> {
  for (let depth = 1; depth <= namespace.length; depth++) {
    await call('POST', `${uri}/v1/namespaces`, { namespace: namespace.slice(0, depth) });
  }
}

/** A table with a one-column schema: cheap to create, no data, no Spark. */
export async function createTable(
  uri: string,
  namespace: readonly string[],
  name: string,
): Promise<void> {
  await call('POST', `${uri}/v1/namespaces/${nsPath(namespace)}/tables`, {
    name,
    schema: {
      type: 'struct',
      'schema-id': 0,
      fields: [{ id: 1, name: 'id', type: 'long', required: false }],
    },
  });
}

export async function dropTable(uri: string, table: TableId): Promise<void> {
  await call(
    'DELETE',
    `${uri}/v1/namespaces/${nsPath(table.namespace)}/tables/${encodeURIComponent(table.name)}?purgeRequested=true`,
  );
}

/** Sets a table property: a metadata-only commit that moves the metadata location. */
export async function setProperty(
  uri: string,
  table: TableId,
  key: string,
  value: string,
): Promise<void> {
  await call(
    'POST',
    `${uri}/v1/namespaces/${nsPath(table.namespace)}/tables/${encodeURIComponent(table.name)}`,
    {
      identifier: { namespace: table.namespace, name: table.name },
      requirements: [],
      updates: [{ action: 'set-properties', updates: { [key]: value } }],
    },
  );
}

/** Drops every table under `root` (depth-first) and the namespaces themselves. */
export async function dropNamespaceTree(uri: string, root: readonly string[]): Promise<void> {
  const children = await fetch(`${uri}/v1/namespaces?parent=${nsPath(root)}`);
  if (children.status === 404) return;
  const { namespaces } = (await children.json()) as { namespaces: string[][] };
  for (const child of namespaces) await dropNamespaceTree(uri, child);
  const tables = await fetch(`${uri}/v1/namespaces/${nsPath(root)}/tables?pageSize=1000`);
  if (tables.ok) {
    const { identifiers } = (await tables.json()) as { identifiers: { name: string }[] };
    for (const { name } of identifiers) {
      await dropTable(uri, { catalog: 'x', namespace: [...root], name });
    }
  }
  await fetch(`${uri}/v1/namespaces/${nsPath(root)}`, { method: 'DELETE' });
}
