import { badRequest, KubeApiError, StatusReason } from './api-status.ts';

type Json = unknown;

function isObject(value: Json): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * RFC 7386 JSON merge patch. Strategic merge patch is applied the same way: the kinds this
 * fake serves rarely rely on its list-merge keys, and the difference is documented.
 */
export function mergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return structuredClone(patch);
  const result: Record<string, Json> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

interface Operation {
  readonly op: string;
  readonly path: string;
  readonly from?: string;
  readonly value?: Json;
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw badRequest(`json patch: invalid path ${JSON.stringify(path)}`);
  return path
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function parentOf(doc: Json, parts: readonly string[], path: string): Json {
  let node = doc;
  for (const part of parts.slice(0, -1)) {
    if (Array.isArray(node)) node = node[Number(part)];
    else if (isObject(node)) node = node[part];
    else node = undefined;
    if (node === undefined) throw unprocessable(`json patch: path ${path} does not exist`);
  }
  return node;
}

function unprocessable(message: string): KubeApiError {
  return new KubeApiError(422, StatusReason.invalid, message);
}

function read(doc: Json, path: string): Json {
  const parts = pointer(path);
  if (parts.length === 0) return doc;
  const parent = parentOf(doc, parts, path);
  const last = parts[parts.length - 1] ?? '';
  const value: Json = Array.isArray(parent)
    ? (parent as Json[])[Number(last)]
    : isObject(parent)
      ? parent[last]
      : undefined;
  if (value === undefined) throw unprocessable(`json patch: path ${path} does not exist`);
  return value;
}

function remove(doc: Json, path: string): Json {
  const parts = pointer(path);
  const parent = parentOf(doc, parts, path);
  const last = parts[parts.length - 1] ?? '';
  if (Array.isArray(parent)) {
    const index = Number(last);
    if (!Number.isInteger(index) || index < 0 || index >= parent.length)
      throw unprocessable(`json patch: path ${path} does not exist`);
    return parent.splice(index, 1)[0];
  }
  if (!isObject(parent) || !(last in parent))
    throw unprocessable(`json patch: path ${path} does not exist`);
  const value = parent[last];
  delete parent[last];
  return value;
}

function add(doc: Json, path: string, value: Json): Json {
  const parts = pointer(path);
  if (parts.length === 0) return value;
  const parent = parentOf(doc, parts, path);
  const last = parts[parts.length - 1] ?? '';
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    if (!Number.isInteger(index) || index < 0 || index > parent.length)
      throw unprocessable(`json patch: index out of range at ${path}`);
    parent.splice(index, 0, value);
  } else if (isObject(parent)) parent[last] = value;
  else throw unprocessable(`json patch: path ${path} does not exist`);
  return doc;
}

/** RFC 6902 JSON patch — the default patch type of @kubernetes/client-node 1.x/2.x. */
export function jsonPatch(target: Json, operations: Json): Json {
  if (!Array.isArray(operations)) throw badRequest('json patch: expected an array of operations');
  let doc = structuredClone(target);
  for (const raw of operations as Operation[]) {
    const value = structuredClone(raw.value);
    switch (raw.op) {
      case 'add':
        doc = add(doc, raw.path, value);
        break;
      case 'remove':
        remove(doc, raw.path);
        break;
      case 'replace':
        read(doc, raw.path);
        if (pointer(raw.path).length === 0) doc = value;
        else {
          remove(doc, raw.path);
          doc = add(doc, raw.path, value);
        }
        break;
      case 'move': {
        const moved = remove(doc, raw.from ?? '');
        doc = add(doc, raw.path, moved);
        break;
      }
      case 'copy':
        doc = add(doc, raw.path, structuredClone(read(doc, raw.from ?? '')));
        break;
      case 'test':
        if (JSON.stringify(read(doc, raw.path)) !== JSON.stringify(value))
          throw unprocessable(`json patch: test failed at ${raw.path}`);
        break;
      default:
        throw badRequest(`json patch: unknown op ${JSON.stringify(raw.op)}`);
    }
  }
  return doc;
}
