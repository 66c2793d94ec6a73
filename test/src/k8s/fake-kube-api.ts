import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual, createHash } from 'node:crypto';
import { badRequest, deletedStatus, KubeApiError, StatusReason } from './api-status.ts';
import { WatchEventType } from './kube-object.ts';
import type { KubeObject } from './kube-object.ts';
import { FakeKubeStore } from './object-store.ts';
import type { FakeKubeStoreOptions } from './object-store.ts';
import { parseResourcePath } from './request-path.ts';
import type { ResourcePath } from './request-path.ts';
import { apiVersionOf, RESOURCE_TYPES } from './resource-types.ts';

export interface FakeKubeApiOptions extends FakeKubeStoreOptions {
  /** Port to listen on; 0 (default) picks a free one. */
  readonly port?: number;
  /** Interface to bind; default 127.0.0.1. */
  readonly host?: string;
  /** When set, every request needs `Authorization: Bearer <token>` (401 otherwise). */
  readonly token?: string;
  /** How often a watch with `allowWatchBookmarks=true` gets a BOOKMARK; default 10 s. */
  readonly bookmarkIntervalMs?: number;
}

export interface FakeKubeApi {
  /** `http://127.0.0.1:<port>` — the `server` of a kubeconfig cluster. */
  readonly url: string;
  readonly port: number;
  /** The state behind the API; tests may read or write it directly. */
  readonly store: FakeKubeStore;
  /**
   * Fault injection: requests for which `matches(method, path)` is true are held unanswered
   * until `release()`; one whose caller goes away meanwhile (a crashed client) is dropped
   * without effect. `held()` counts the held requests whose callers are still there.
   */
  hold(matches: (method: string, path: string) => boolean): RequestHold;
  /** TCP connections accepted so far (a client that reuses connections opens few). */
  connections(): number;
  /** Ends open watches and closes the server. */
  stop(): Promise<void>;
}

export interface RequestHold {
  held(): number;
  release(): void;
}

const MAX_BODY = 3 * 1024 * 1024;

function send(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY)
      throw new KubeApiError(413, StatusReason.badRequest, 'request entity too large');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw badRequest('the request body is not valid JSON');
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/**
 * A fake Kubernetes API server: a faithful subset of the real API (see docs/testing.md,
 * "The fake Kubernetes API server") for the kinds Icepack touches, on node:http, so that
 * @kubernetes/client-node talks to it as to a cluster. It is not a Kubernetes: no
 * scheduler, no pods, no admission beyond what is documented.
 */
export async function startFakeKubeApi(options: FakeKubeApiOptions = {}): Promise<FakeKubeApi> {
  const store = new FakeKubeStore(options);
  const bookmarkIntervalMs = options.bookmarkIntervalMs ?? 10_000;
  const expectedToken = options.token === undefined ? undefined : digest(options.token);
  const closers = new Set<() => void>();
  interface Hold {
    readonly matches: (method: string, path: string) => boolean;
    readonly waiting: Set<() => void>;
    released: boolean;
  }
  const holds = new Set<Hold>();

  /** Resolves false when the caller went away while held (its request is then dropped). */
  async function waitForHolds(
    req: IncomingMessage,
    res: ServerResponse,
    pathname: string,
  ): Promise<boolean> {
    for (const hold of holds) {
      if (hold.released || !hold.matches(req.method ?? 'GET', pathname)) continue;
      const kept = await new Promise<boolean>((resolve) => {
        const release = () => {
          res.off('close', abandon);
          resolve(true);
        };
        const abandon = () => {
          hold.waiting.delete(release);
          resolve(false);
        };
        hold.waiting.add(release);
        res.once('close', abandon);
      });
      if (!kept) return false;
    }
    return !res.destroyed && !req.socket.destroyed;
  }

  function authorized(req: IncomingMessage): boolean {
    if (expectedToken === undefined) return true;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    return match?.[1] !== undefined && timingSafeEqual(digest(match[1]), expectedToken);
  }

  function watch(
    req: IncomingMessage,
    res: ServerResponse,
    path: ResourcePath,
    query: URLSearchParams,
  ): void {
    const namespace = path.namespace;
    const fieldSelector =
      path.name === undefined
        ? query.get('fieldSelector')
        : [`metadata.name=${path.name}`, query.get('fieldSelector')].filter(Boolean).join(',');
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    // Headers go out now: a client waits for them before it counts the watch as open.
    res.flushHeaders();
    const write = (type: string, object: unknown): void => {
      res.write(`${JSON.stringify({ type, object })}\n`);
    };
    let unsubscribe: () => void = () => undefined;
    const timers: NodeJS.Timeout[] = [];
    const close = (): void => {
      unsubscribe();
      for (const timer of timers) clearTimeout(timer);
      closers.delete(close);
      if (!res.writableEnded) res.end();
    };
    closers.add(close);
    req.on('close', close);
    try {
      unsubscribe = store.watch(
        path.type,
        {
          ...(namespace === undefined ? {} : { namespace }),
          labelSelector: query.get('labelSelector'),
          fieldSelector,
          resourceVersion: query.get('resourceVersion'),
        },
        (type, object: KubeObject) => write(type, object),
      );
    } catch (error) {
      // The real server reports a refused watch as an ERROR event, then closes.
      if (error instanceof KubeApiError) write(WatchEventType.error, error.status());
      close();
      return;
    }
    const timeoutSeconds = Number(query.get('timeoutSeconds') ?? '0');
    if (timeoutSeconds > 0) timers.push(setTimeout(close, timeoutSeconds * 1000));
    if (query.get('allowWatchBookmarks') === 'true') {
      const bookmark = setInterval(() => {
        write(WatchEventType.bookmark, {
          kind: path.type.kind,
          apiVersion: apiVersionOf(path.type),
          metadata: { resourceVersion: store.resourceVersion() },
        });
      }, bookmarkIntervalMs);
      timers.push(bookmark);
    }
  }

  async function handleResource(
    req: IncomingMessage,
    res: ServerResponse,
    path: ResourcePath,
    query: URLSearchParams,
  ): Promise<void> {
    const { type, namespace, name, subresource } = path;
    const method = req.method ?? 'GET';
    const listOptions = {
      labelSelector: query.get('labelSelector'),
      fieldSelector: query.get('fieldSelector'),
    };
    const writeOptions = subresource === 'status' ? { subresource: 'status' as const } : {};
    if (
      method === 'GET' &&
      (query.get('watch') === 'true' || query.get('watch') === '1' || path.watchPrefix)
    ) {
      watch(req, res, path, query);
      return;
    }
    if (name === undefined) {
      switch (method) {
        case 'GET': {
          const { items, resourceVersion } = store.list(type, namespace, listOptions);
          send(res, 200, {
            apiVersion: apiVersionOf(type),
            kind: `${type.kind}List`,
            metadata: { resourceVersion },
            items,
          });
          return;
        }
        case 'POST':
          if (type.namespaced && namespace === undefined) break;
          send(res, 201, store.create(type, namespace, await readBody(req)));
          return;
        case 'DELETE': {
          const items = store.deleteCollection(type, namespace, listOptions);
          send(res, 200, {
            apiVersion: apiVersionOf(type),
            kind: `${type.kind}List`,
            metadata: { resourceVersion: store.resourceVersion() },
            items,
          });
          return;
        }
        default:
          break;
      }
    } else {
      switch (method) {
        case 'GET':
          send(res, 200, store.get(type, namespace, name));
          return;
        case 'PUT':
          send(res, 200, store.replace(type, namespace, name, await readBody(req), writeOptions));
          return;
        case 'PATCH': {
          const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
          send(
            res,
            200,
            store.patch(type, namespace, name, contentType, await readBody(req), writeOptions),
          );
          return;
        }
        case 'DELETE': {
          if (subresource !== undefined) break;
          const body = await readBody(req);
          const preconditions =
            typeof body === 'object' && body !== null && 'preconditions' in body
              ? ((body as { preconditions?: { uid?: string; resourceVersion?: string } })
                  .preconditions ?? {})
              : {};
          const deleted = store.delete(type, namespace, name, preconditions);
          // Namespaces answer with the object (now Terminating); other kinds with a Status.
          send(
            res,
            200,
            type.plural === 'namespaces'
              ? deleted
              : deletedStatus(type, name, deleted.metadata.uid),
          );
          return;
        }
        default:
          break;
      }
    }
    throw new KubeApiError(
      405,
      StatusReason.methodNotAllowed,
      `the server does not allow this method on the requested resource`,
    );
  }

  function discovery(pathname: string): unknown {
    if (pathname === '/version')
      return {
        major: '1',
        minor: '33',
        gitVersion: 'v1.33.0-icepack-fake',
        platform: 'linux/amd64',
      };
    if (pathname === '/api')
      return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };
    const groups = [
      ...new Set(
        RESOURCE_TYPES.filter((t) => t.group !== '').map((t) => `${t.group}/${t.version}`),
      ),
    ];
    if (pathname === '/apis') {
      return {
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: groups.map((gv) => {
          const [name = ''] = gv.split('/');
          const version = { groupVersion: gv, version: gv.split('/')[1] };
          return { name, versions: [version], preferredVersion: version };
        }),
      };
    }
    const groupVersion =
      pathname === '/api/v1' ? 'v1' : pathname.startsWith('/apis/') ? pathname.slice(6) : undefined;
    if (groupVersion === undefined) return undefined;
    const types = RESOURCE_TYPES.filter((t) => apiVersionOf(t) === groupVersion);
    if (types.length === 0) return undefined;
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion,
      resources: types.flatMap((t) => [
        {
          name: t.plural,
          singularName: t.kind.toLowerCase(),
          namespaced: t.namespaced,
          kind: t.kind,
          verbs: [
            'create',
            'delete',
            'deletecollection',
            'get',
            'list',
            'patch',
            'update',
            'watch',
          ],
        },
        ...(t.statusSubresource
          ? [
              {
                name: `${t.plural}/status`,
                singularName: '',
                namespaced: t.namespaced,
                kind: t.kind,
                verbs: ['get', 'patch', 'update'],
              },
            ]
          : []),
      ]),
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    try {
      if (!authorized(req)) throw new KubeApiError(401, StatusReason.unauthorized, 'Unauthorized');
      // A caller that gave up (or crashed) while held never reaches the store.
      if (!(await waitForHolds(req, res, url.pathname))) return;
      const path = parseResourcePath(url.pathname);
      if (path !== undefined) {
        await handleResource(req, res, path, url.searchParams);
        return;
      }
      const found = req.method === 'GET' ? discovery(url.pathname.replace(/\/$/, '')) : undefined;
      if (found !== undefined) {
        send(res, 200, found);
        return;
      }
      throw new KubeApiError(
        404,
        StatusReason.notFound,
        'the server could not find the requested resource',
      );
    } catch (error) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (error instanceof KubeApiError) send(res, error.code, error.status());
      else
        send(res, 500, {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: String(error),
          reason: 'InternalError',
          code: 500,
        });
    }
  }

  let connections = 0;
  const server = createServer((req, res) => {
    void handle(req, res);
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host ?? '127.0.0.1';
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    store,
    connections: () => connections,
    hold(matches) {
      const hold: Hold = { matches, waiting: new Set(), released: false };
      holds.add(hold);
      return {
        held: () => hold.waiting.size,
        release() {
          hold.released = true;
          holds.delete(hold);
          for (const resume of hold.waiting) resume();
          hold.waiting.clear();
        },
      };
    },
    async stop() {
      for (const hold of holds) {
        for (const resume of hold.waiting) resume();
      }
      holds.clear();
      for (const close of [...closers]) close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
