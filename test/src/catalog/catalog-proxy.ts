import {
  createServer,
  request as forwardRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** Sends the request on to the catalog; its answer goes back unchanged unless `answer` takes it. */
export type Forward = (options?: {
  /** Headers to set on the forwarded request (over the client's). */
  readonly headers?: OutgoingHttpHeaders;
  /** Takes the catalog's answer instead of piping it back as it is. */
  readonly answer?: (upstream: IncomingMessage) => void;
}) => void;

export interface CatalogProxy {
  /** The proxy's URI: the target's, on the proxy's port. */
  readonly uri: string;
  close(): Promise<void>;
}

/**
 * An HTTP server in front of a REST catalog, for test catalogs that behave as a real one
 * would (auth, a scoped view) over the shared catalog: `handle` answers a request itself or
 * forwards it (path, method, headers and body as they came; `host` the catalog's). The one
 * home of forwarding for the test catalogs of docs/testing.md.
 */
export async function startCatalogProxy(
  target: string,
  handle: (req: IncomingMessage, res: ServerResponse, forward: Forward) => void,
): Promise<CatalogProxy> {
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    handle(req, res, (options = {}) => {
      const out = forwardRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: upstream.host, ...options.headers },
        },
        (answer) => {
          if (options.answer !== undefined) {
            options.answer(answer);
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      out.on('error', () => res.writeHead(502).end());
      req.pipe(out);
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  return {
    uri: `http://127.0.0.1:${String(port)}${upstream.pathname.replace(/\/$/, '')}`,
    close: () =>
      new Promise<void>((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}

/**
 * Sends the catalog's answer on with its body changed by `change` when it is a 200 (any other
 * answer goes on as it came). Forward with `accept-encoding: identity`: the body is read as text.
 */
export function answerChanged(
  answer: IncomingMessage,
  res: ServerResponse,
  change: (text: string) => string,
): void {
  if (answer.statusCode !== 200) {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
    return;
  }
  const chunks: Buffer[] = [];
  answer.on('data', (c: Buffer) => chunks.push(c));
  answer.on('end', () => {
    const text = change(Buffer.concat(chunks).toString('utf8'));
    res
      .writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
      })
      .end(text);
  });
}

/** Answers `status` with a JSON body. */
export function answerJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** The REST spec's 401 body. */
export function notAuthorized(res: ServerResponse, message: string): void {
  answerJson(res, 401, { error: { message, type: 'NotAuthorizedException', code: 401 } });
}
