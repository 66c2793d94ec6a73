import {
  Agent,
  createServer,
  request,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type Server,
} from 'node:http';
import type { AddressInfo } from 'node:net';

// A loopback HTTP proxy in front of one upstream (the S3 store, a REST catalog) that counts
// what goes through it: the bench measures requests and bytes per table scanned on the wire,
// whoever the client is (the scanner's AWS SDK, the catalog JVM's S3FileIO), without
// instrumenting either. Bodies are forwarded untouched (a gzip answer is counted compressed).

/** What went through a proxy, from its start (or between two snapshots, `trafficBetween`). */
export interface Traffic {
  /** TCP connections clients opened to the proxy (a client that reuses connections opens few). */
  readonly connections: number;
  readonly requests: number;
  /** Requests by method and status, e.g. `GET 200`, `HEAD 404`. */
  readonly byRequest: Readonly<Record<string, number>>;
  /** Request bodies (S3 PUTs, REST commits). */
  readonly requestBodyBytes: number;
  /** Response bodies, as sent (compressed when the upstream compressed them). */
  readonly responseBodyBytes: number;
  /** Request and response lines and headers (`name: value\r\n`), without chunk framing. */
  readonly headerBytes: number;
}

export const NO_TRAFFIC: Traffic = {
  connections: 0,
  requests: 0,
  byRequest: {},
  requestBodyBytes: 0,
  responseBodyBytes: 0,
  headerBytes: 0,
};

/** `after − before`, for the traffic of one phase. */
export function trafficBetween(before: Traffic, after: Traffic): Traffic {
  const byRequest: Record<string, number> = {};
  for (const [key, n] of Object.entries(after.byRequest)) {
    const d = n - (before.byRequest[key] ?? 0);
    if (d !== 0) byRequest[key] = d;
  }
  return {
    connections: after.connections - before.connections,
    requests: after.requests - before.requests,
    byRequest,
    requestBodyBytes: after.requestBodyBytes - before.requestBodyBytes,
    responseBodyBytes: after.responseBodyBytes - before.responseBodyBytes,
    headerBytes: after.headerBytes - before.headerBytes,
  };
}

// Per connection, not end to end: each side frames its own messages.
const HOP_BY_HOP = new Set([
  'connection',
  // The proxy answered `100 Continue` itself (Node does) and sends the body at once.
  'expect',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}

/** Bytes of a message's headers as `name: value\r\n` lines (raw: as received). */
function headerBytes(rawHeaders: readonly string[]): number {
  let n = 2; // the empty line
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    n += Buffer.byteLength(rawHeaders[i]!) + Buffer.byteLength(rawHeaders[i + 1]!) + 4;
  }
  return n;
}

export class CountingProxy {
  readonly #server: Server;
  readonly #agent = new Agent({ keepAlive: true });
  #connections = 0;
  #requests = 0;
  readonly #byRequest = new Map<string, number>();
  #requestBodyBytes = 0;
  #responseBodyBytes = 0;
  #headerBytes = 0;

  private constructor(upstream: URL) {
    this.#server = createServer((req, res) => {
      this.#requests++;
      this.#headerBytes +=
        Buffer.byteLength(`${req.method ?? ''} ${req.url ?? ''} HTTP/1.1\r\n`) +
        headerBytes(req.rawHeaders);
      // The client's Host header is kept: an S3 request's signature covers it.
      const forward = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: endToEnd(req.headers),
          agent: this.#agent,
        },
        (answer) => {
          const status = answer.statusCode ?? 502;
          const key = `${req.method ?? '?'} ${status}`;
          this.#byRequest.set(key, (this.#byRequest.get(key) ?? 0) + 1);
          this.#headerBytes +=
            Buffer.byteLength(`HTTP/1.1 ${status} ${answer.statusMessage ?? ''}\r\n`) +
            headerBytes(answer.rawHeaders);
          res.writeHead(status, answer.statusMessage, endToEnd(answer.headers));
          answer.on('data', (chunk: Buffer) => {
            this.#responseBodyBytes += chunk.length;
          });
          answer.pipe(res);
          answer.on('error', () => res.destroy());
        },
      );
      forward.on('error', (error) => {
        const key = `${req.method ?? '?'} proxy-error`;
        this.#byRequest.set(key, (this.#byRequest.get(key) ?? 0) + 1);
        if (res.headersSent) res.destroy();
        else res.writeHead(502, { 'content-type': 'text/plain' }).end(error.message);
      });
      req.on('data', (chunk: Buffer) => {
        this.#requestBodyBytes += chunk.length;
      });
      req.pipe(forward);
    });
    this.#server.on('connection', () => this.#connections++);
    // Idle client connections stay open as long as a real endpoint keeps them (S3 closes
    // idle ones after ~20 s): a short proxy timeout would count reconnects the client
    // would not make.
    this.#server.keepAliveTimeout = 20_000;
  }

  /** Listens on `127.0.0.1:port` (0: any free port) and forwards to `upstream` (`http://host:port`). */
  static async start(upstream: string, port = 0): Promise<CountingProxy> {
    const proxy = new CountingProxy(new URL(upstream));
    await new Promise<void>((resolve, reject) => {
      proxy.#server.once('error', reject);
      proxy.#server.listen(port, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  get uri(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  traffic(): Traffic {
    return {
      connections: this.#connections,
      requests: this.#requests,
      byRequest: Object.fromEntries(this.#byRequest),
      requestBodyBytes: this.#requestBodyBytes,
      responseBodyBytes: this.#responseBodyBytes,
      headerBytes: this.#headerBytes,
    };
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#agent.destroy();
  }
}
