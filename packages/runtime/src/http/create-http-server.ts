import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { errorHandler, notFoundHandler } from './error-handler.ts';
import { runReadinessChecks } from './readiness.ts';
import type { ReadinessCheck } from './readiness.ts';

/** Serves `/metrics`; the telemetry module's Prometheus exporter provides one. */
export interface MetricsEndpoint {
  handle(req: IncomingMessage, res: ServerResponse): void;
}

export interface HttpServerOptions {
  /** Port to listen on; 0 picks a free one (see {@link HttpServer.port}). Required. */
  readonly port: number;
  /** Interface to bind. Default `0.0.0.0`. */
  readonly host?: string;
  readonly logger: Logger;
  /** Dependencies `/readyz` checks. Default none (ready as soon as it listens). */
  readonly readiness?: readonly ReadinessCheck[];
  /** Time each readiness check gets before it counts as failing. Default 2000 ms. */
  readonly readinessTimeoutMs?: number;
  /** Serves `GET /metrics` when given. Default none (404). */
  readonly metrics?: MetricsEndpoint;
  /** Largest JSON body accepted. Default `1mb`. */
  readonly bodyLimit?: string;
}

export interface HttpServer {
  /** Mount routers here before {@link listen}; JSON bodies are already parsed. */
  readonly app: Express;
  /** Adds the 404 and error handlers (so they come after every router) and listens. */
  listen(): Promise<void>;
  /** The bound port (after listen). */
  readonly port: number;
  /** Stops accepting connections, waits for in-flight requests, then closes idle ones. */
  close(): Promise<void>;
}

export function createHttpServer(options: HttpServerOptions): HttpServer {
  const { logger } = options;
  const readiness = options.readiness ?? [];
  const readinessTimeoutMs = options.readinessTimeoutMs ?? 2_000;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const report = await runReadinessChecks(readiness, readinessTimeoutMs);
    if (!report.ready) logger.warn({ failing: report.failing, checks: report.checks }, 'not ready');
    res.status(report.ready ? 200 : 503).json({
      status: report.ready ? 'ready' : 'not ready',
      failing: report.failing,
      checks: report.checks,
    });
  });
  const metrics = options.metrics;
  if (metrics !== undefined) {
    app.get('/metrics', (req, res) => {
      metrics.handle(req, res);
    });
  }
  app.use(express.json({ limit: options.bodyLimit ?? '1mb' }));

  let server: Server | undefined;
  return {
    app,
    get port() {
      return server === undefined ? options.port : (server.address() as AddressInfo).port;
    },
    async listen() {
      app.use(notFoundHandler);
      app.use(errorHandler(logger));
      const listening = app.listen(options.port, options.host ?? '0.0.0.0');
      server = listening;
      await new Promise<void>((resolve, reject) => {
        listening.once('listening', resolve);
        listening.once('error', reject);
      });
      logger.info({ port: (listening.address() as AddressInfo).port }, 'http server listening');
    },
    async close() {
      const current = server;
      if (current === undefined) return;
      await new Promise<void>((resolve, reject) => {
        current.close((error) => (error === undefined ? resolve() : reject(error)));
        current.closeIdleConnections();
      });
    },
  };
}
