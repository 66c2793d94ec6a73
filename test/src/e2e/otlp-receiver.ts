import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { decodeTraceRequest } from './otlp-protobuf.ts';
import type { OtlpAttribute, OtlpTraces } from './otlp-protobuf.ts';

/** One span as a service or the Spark job exported it (ids are hex). */
export interface ReceivedSpan {
  readonly service: string;
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly attributes: Readonly<Record<string, unknown>>;
  /** 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  readonly statusMessage: string | undefined;
}

/** An attribute's value as plain data: `{stringValue: 'a'}` is `'a'`, an array its values. */
function plain(value: Readonly<Record<string, unknown>>): unknown {
  const inner = Object.values(value)[0];
  const values = (value.arrayValue as { values?: Record<string, unknown>[] } | undefined)?.values;
  return values === undefined ? inner : values.map(plain);
}

function attributes(list: readonly OtlpAttribute[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) out[key] = plain(value);
  return out;
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
}

/**
 * A minimal OTLP/HTTP collector for tests: accepts the JSON encoding the services' exporter
 * sends (`@opentelemetry/exporter-trace-otlp-http`) and the protobuf encoding the Spark job's
 * sends (`opentelemetry-exporter-otlp-proto-http`), keeps every span, and answers metric
 * exports with an empty success so the exporters never retry or complain.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Requests that were not OTLP JSON (protobuf, bad JSON): a test can assert there were none. */
  readonly rejected: string[] = [];
  readonly #server: Server;

  private constructor() {
    this.#server = createServer((req, res) => {
      void body(req).then((raw) => {
        const type = req.headers['content-type'] ?? '';
        if (req.url === '/v1/traces') this.#receive(type, raw);
        // An empty export response in the request's encoding (an empty protobuf is no bytes).
        if (type.startsWith('application/x-protobuf')) {
          res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        } else {
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        }
      });
    });
  }

  static async start(): Promise<OtlpReceiver> {
    const receiver = new OtlpReceiver();
    await new Promise<void>((resolve) => receiver.#server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  #receive(type: string, raw: Buffer): void {
    try {
      if (type.startsWith('application/json')) {
        this.add(JSON.parse(raw.toString('utf8')) as OtlpTraces);
      } else if (type.startsWith('application/x-protobuf')) {
        this.add(decodeTraceRequest(raw));
      } else {
        this.rejected.push(`traces as ${type}`);
      }
    } catch (error) {
      this.rejected.push(`bad ${type}: ${(error as Error).message}`);
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
            statusCode: span.status?.code ?? 0,
            statusMessage: span.status?.message,
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
