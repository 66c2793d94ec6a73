import { createServer, request, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A switchable HTTP proxy in front of the real REST catalog: `down()` refuses connections
 * (as a crashed catalog would), `up()` serves again on the same port.
 */
export class CatalogProxy {
  readonly #target: URL;
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  #port = 0;

  constructor(target: string) {
    this.#target = new URL(target);
  }

  get uri(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  async up(): Promise<void> {
    const server = createServer((req, res) => {
      const upstream = request(
        {
          host: this.#target.hostname,
          port: this.#target.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: this.#target.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(this.#port, '127.0.0.1', resolve));
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  async down(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (server === undefined) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Kept-alive connections would otherwise go on working.
    for (const socket of this.#sockets) socket.destroy();
    await closed;
  }
}
