import { randomBytes } from 'node:crypto';
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  type ClientRequest,
} from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import {
  adminKubeConfig,
  startSecondApiServer,
  type SecondApiServer,
  type ServiceAccountAccess,
} from '@icepack/test';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { QuotaRoom } from '../domain/sizing.ts';
import { KubeQuota } from './kube-quota.ts';
import { chartDispatcherAccess } from './testing/real-group.ts';
import { testBinding } from './testing/test-binding.ts';

// The dispatcher's quota watch on the real API server when its watch expires (410 Gone): the
// connection moves to another API server of the same cluster (an HA peer, or the server after a
// restart) whose watch cache starts after the version the dispatcher holds. The real server
// refuses the watch with 410 Expired; the watch lists again and loses nothing that changed
// meanwhile. A proxy in front of the servers stands for the load balancer of an HA control plane.
const infra = inject('infra');
const suffix = randomBytes(3).toString('hex');
const namespace = `icepack-q410${suffix}`;
const binding = testBinding(`q410${suffix}`, { runner: 'spark-operator', namespace });
const GiB = 2 ** 30;

interface Forwarded {
  readonly url: string;
  readonly target: string;
  readonly watch: boolean;
  status?: number;
  /** A watch answered with an `ERROR` event carrying 410 (Expired). */
  expired: boolean;
}

/** The load balancer: forwards to one API server, can drop every open stream and hold new ones. */
class ApiProxy {
  readonly log: Forwarded[] = [];
  readonly #server: Server;
  readonly #open = new Set<{ res: ServerResponse; upstream: ClientRequest }>();
  readonly #held: (() => void)[] = [];
  #target: string;
  #ca: RequestOptions['ca'];
  #holding = false;

  private constructor(target: string, ca: RequestOptions['ca']) {
    this.#target = target;
    this.#ca = ca;
    this.#server = createServer((req, res) => {
      if (this.#holding) this.#held.push(() => this.#forward(req, res));
      else this.#forward(req, res);
    });
  }

  static async start(
    target: string,
    ca: RequestOptions['ca'],
  ): Promise<ApiProxy & { url: string }> {
    const proxy = new ApiProxy(target, ca);
    await new Promise<void>((listening) => proxy.#server.listen(0, '127.0.0.1', listening));
    const { port } = proxy.#server.address() as AddressInfo;
    return Object.assign(proxy, { url: `http://127.0.0.1:${String(port)}` });
  }

  /** Ends every open response (a watch sees its stream end) and holds new requests. */
  cut(): void {
    this.#holding = true;
    for (const { res, upstream } of this.#open) {
      upstream.destroy();
      res.end();
    }
    this.#open.clear();
  }

  /** Sends what was held, and everything after, to `target`. */
  resume(target: string): void {
    this.#target = target;
    this.#holding = false;
    for (const send of this.#held.splice(0)) send();
  }

  lists(): number {
    return this.log.filter((f) => !f.watch).length;
  }

  #forward(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    const entry: Forwarded = {
      url,
      target: this.#target,
      watch: /[?&]watch=(true|1)/.test(url),
      expired: false,
    };
    this.log.push(entry);
    const upstream = httpsRequest(
      new URL(url, this.#target),
      { method: req.method, headers: req.headers, ca: this.#ca, agent: false },
      (answer) => {
        entry.status = answer.statusCode;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.on('data', (chunk: Buffer) => {
          if (entry.watch && /"type":"ERROR".*"code":410/.test(chunk.toString()))
            entry.expired = true;
          res.write(chunk);
        });
        answer.on('end', () => {
          this.#open.delete(pair);
          res.end();
        });
      },
    );
    const pair = { res, upstream };
    this.#open.add(pair);
    upstream.on('error', () => {
      this.#open.delete(pair);
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    if (req.method === 'GET') upstream.end();
    else req.pipe(upstream);
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((closed) => {
      this.#server.closeAllConnections();
      this.#server.close(() => closed());
    });
  }
}

let admin: KubeConfig;
let core: CoreV1Api;
let access: ServiceAccountAccess;
let proxy: ApiProxy & { url: string };
let second: SecondApiServer | undefined;
let quota: KubeQuota;

/** Polls `room()` until it equals `expected` (the watch is asynchronous); no timing assertion. */
async function roomBecomes(expected: QuotaRoom): Promise<void> {
  let room: QuotaRoom = {};
  for (let i = 0; i < 1_200; i += 1) {
    room = await quota.room(binding);
    if (JSON.stringify(room) === JSON.stringify(expected)) return;
    await sleep(50);
  }
  expect(room).toEqual(expected);
}

async function setCpu(name: string, cpu: string): Promise<void> {
  const current = await core.readNamespacedResourceQuota({ name, namespace });
  await core.replaceNamespacedResourceQuota({
    name,
    namespace,
    body: { ...current, spec: { hard: { ...current.spec?.hard, 'requests.cpu': cpu } } },
  });
}

beforeAll(async () => {
  admin = adminKubeConfig(infra.kube);
  core = admin.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  for (const [name, cpu] of [
    ['icepack', '4'],
    ['extra', '3'],
  ] as const) {
    await core.createNamespacedResourceQuota({
      namespace,
      body: {
        metadata: { name },
        spec: { hard: { 'requests.cpu': cpu, 'requests.memory': '8Gi' } },
      },
    });
  }
  access = await chartDispatcherAccess(admin, namespace, suffix);
  const cluster = admin.getCurrentCluster();
  if (cluster === null) throw new Error('no cluster in the admin kubeconfig');
  const tls: RequestOptions = {};
  await admin.applyToHTTPSOptions(tls);
  proxy = await ApiProxy.start(cluster.server, tls.ca);
  // The dispatcher reaches the cluster through the proxy, with the chart's rights only. The
  // proxy is plain HTTP on loopback (client-node wants skipTLSVerify for http://); it verifies
  // the API servers' certificates with the cluster's CA.
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'lb', server: proxy.url, skipTLSVerify: true }],
    users: [{ name: 'dispatcher', token: access.token }],
    contexts: [{ name: 'lb', cluster: 'lb', user: 'dispatcher' }],
    currentContext: 'lb',
  });
  quota = new KubeQuota(kc);
}, 120_000);

afterAll(async () => {
  await quota?.close();
  await proxy?.close();
  await second?.stop();
  await access?.cleanup();
  await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
});

describe('the quota watch on the real API server', () => {
  it('re-lists after 410 Gone from the real server and loses no change made while it was away', async () => {
    await quota.open(binding);
    // `open` waits at most 5 s for the first sync; on a loaded machine it may take longer.
    for (let i = 0; i < 1_200 && !quota.watching(namespace); i += 1) await sleep(50);
    expect(quota.watching(namespace), JSON.stringify(proxy.log)).toBe(true);
    await roomBecomes({ cpuMillicores: 3_000, memoryBytes: 8 * GiB });

    // The connection drops; while no watch runs, one quota goes and the other grows.
    proxy.cut();
    await core.deleteNamespacedResourceQuota({ name: 'extra', namespace });
    await setCpu('icepack', '6');
    // The dispatcher comes back through another API server of the cluster, started since.
    second = await startSecondApiServer(infra.kube);
    proxy.resume(second.url);
    await roomBecomes({ cpuMillicores: 6_000, memoryBytes: 8 * GiB });

    // The real server refused the resumed watch with 410 Expired; the watch listed again, then
    // watched from the new version.
    const expired = proxy.log.findIndex((f) => f.target === second?.url && f.expired);
    expect(expired, JSON.stringify(proxy.log)).toBeGreaterThanOrEqual(0);
    const after = proxy.log.slice(expired + 1);
    expect(after.find((f) => !f.watch)?.status).toBe(200);

    // From here on changes come through the watch: no list while the room follows one.
    const lists = proxy.lists();
    await setCpu('icepack', '5');
    await roomBecomes({ cpuMillicores: 5_000, memoryBytes: 8 * GiB });
    expect(proxy.lists()).toBe(lists);
    expect(quota.watching(namespace)).toBe(true);
    // … through a watch opened after the re-list, answered 200 without expiry.
    expect(
      proxy.log.slice(expired + 1).some((f) => f.watch && f.status === 200 && !f.expired),
    ).toBe(true);
  }, 300_000);
});
