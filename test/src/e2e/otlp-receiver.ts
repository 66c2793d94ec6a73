import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** One span as the services exported it (OTLP/HTTP JSON: ids are hex). */
export interface ReceivedSpan {
  readonly service: string;
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly attributes: Readonly<Record<string, unknown>>;
}

interface OtlpAttribute {
  readonly key: string;
  readonly value: Readonly<Record<string, unknown>>;
}
interface OtlpTraces {
  readonly resourceSpans?: readonly {
    readonly resource?: { readonly attributes?: readonly OtlpAttribute[] };
    readonly scopeSpans?: readonly {
      readonly spans?: readonly {
        readonly name: string;
        readonly traceId: string;
        readonly spanId: string;
        readonly parentSpanId?: string;
        readonly attributes?: readonly OtlpAttribute[];
      }[];
    }[];
  }[];
}

function attributes(list: readonly OtlpAttribute[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) out[key] = Object.values(value)[0];
  return out;
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
}

/**
 * A minimal OTLP/HTTP collector for tests: accepts the JSON encoding the services' OTLP
 * exporter sends (`@opentelemetry/exporter-trace-otlp-http`), keeps every span, and answers
 * metric exports with an empty success so the exporters never retry or complain.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Requests that were not OTLP JSON (protobuf, bad JSON): a test can assert there were none. */
  readonly rejected: string[] = [];
  readonly #server: Server;

  private constructor() {
    this.#server = createServer((req, res) => {
      void body(req).then((raw) => {
        if (req.url === '/v1/traces') this.#receive(req.headers['content-type'] ?? '', raw);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
  }

  static async start(): Promise<OtlpReceiver> {
    const receiver = new OtlpReceiver();
    await new Promise<void>((resolve) => receiver.#server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  #receive(type: string, raw: Buffer): void {
    if (!type.startsWith('application/json')) {
      this.rejected.push(`traces as ${type}`);
      return;
    }
    try {
      this.add(JSON.parse(raw.toString('utf8')) as OtlpTraces);
    } catch (error) {
      this.rejected.push(`bad JSON: ${(error as Error).message}`);
    }
  }

  /** Base URL for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  get endpoint(): string {
    return `http://127.0.0.1:${String((this.#server.address() as AddressInfo).port)}`;
  }

  add(traces: OtlpTraces): void {
    for (const resourceSpans of traces.resourceSpans ?? []) {
      const service = String(attributes(resourceSpans.resource?.attributes)['service.name']);
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({
            service,
            name: span.name,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId === '' ? undefined : span.parentSpanId,
            attributes: attributes(span.attributes),
          });
        }
      }
    }
  }

  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}
