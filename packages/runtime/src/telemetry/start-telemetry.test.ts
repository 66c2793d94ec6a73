import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpServer } from '../http/create-http-server.ts';
import { createLogger } from '../logger/create-logger.ts';
import { startTelemetry } from './start-telemetry.ts';
import type { Telemetry } from './start-telemetry.ts';
import { extractContext, injectTraceparent } from './trace-context.ts';

let telemetry: Telemetry | undefined;
afterEach(async () => {
  await telemetry?.shutdown();
  telemetry = undefined;
});

describe('startTelemetry', () => {
  it('continues a producer span in a consumer through message headers (same trace id)', async () => {
    const exporter = new InMemorySpanExporter();
    telemetry = startTelemetry({ serviceName: 'test', traceExporter: exporter });
    const { tracer } = telemetry;

    const headers: Record<string, unknown> = {};
    const producer = tracer.startSpan('send icepack.commits', { kind: SpanKind.PRODUCER });
    context.with(trace.setSpan(context.active(), producer), () => injectTraceparent(headers));
    producer.end();
    // Kafka hands header values back as Buffers.
    const received = { traceparent: Buffer.from(String(headers.traceparent)) };

    const consumer = tracer.startSpan(
      'process icepack.commits',
      { kind: SpanKind.CONSUMER },
      extractContext(received),
    );
    // Work done inside the consumer span (e.g. publishing the next message) stays in the trace.
    const next: Record<string, unknown> = {};
    context.with(trace.setSpan(context.active(), consumer), () => injectTraceparent(next));
    consumer.end();

    await telemetry.flush();
    expect(exporter.getFinishedSpans()).toHaveLength(2);
    const [sent, processed] = exporter.getFinishedSpans();
    expect(processed?.spanContext().traceId).toBe(sent?.spanContext().traceId);
    expect(processed?.parentSpanContext?.spanId).toBe(sent?.spanContext().spanId);
    expect(String(next.traceparent)).toContain(sent?.spanContext().traceId);
    expect(String(next.traceparent)).toContain(processed?.spanContext().spanId);
  });

  it('is a no-op when nothing is configured, yet still propagates incoming context', () => {
    telemetry = startTelemetry({ serviceName: 'quiet' });
    expect(telemetry.exporting).toBe(false);
    expect(telemetry.metricsEnabled).toBe(false);
    expect(telemetry.metricsEndpoint).toBeUndefined();
    const incoming = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    const span = telemetry.tracer.startSpan('process', {}, extractContext(incoming));
    const out: Record<string, unknown> = {};
    context.with(trace.setSpan(context.active(), span), () => injectTraceparent(out));
    expect(String(out.traceparent)).toContain('0af7651916cd43dd8448eb211c80319c');
  });

  it('serves metrics in Prometheus text on the service HTTP server', async () => {
    telemetry = startTelemetry({ serviceName: 'metrics-test', prometheus: {} });
    telemetry.meter
      .createCounter('icepack_tables_scanned', { description: 'Tables scanned' })
      .add(3, { catalog: 'cat' });
    const http = createHttpServer({
      port: 0,
      host: '127.0.0.1',
      logger: createLogger({
        service: 't',
        destination: new Writable({ write: (_c, _e, cb) => cb() }),
      }),
      metrics: telemetry.metricsEndpoint,
    });
    await http.listen();
    try {
      const body = await (await fetch(`http://127.0.0.1:${http.port}/metrics`)).text();
      expect(body).toMatch(/icepack_tables_scanned(_total)?\{[^}]*catalog="cat"[^}]*\} 3/);
    } finally {
      await http.close();
    }
  });

  it('pushes metrics over OTLP/HTTP to the metrics URL, and only metrics', async () => {
    const received: { path: string; body: string }[] = [];
    const collector = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push({ path: req.url ?? '', body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const { port } = collector.address() as AddressInfo;
    try {
      telemetry = startTelemetry({
        serviceName: 'otlp-metrics-test',
        otlpMetricsUrl: `http://127.0.0.1:${port}/custom/metrics`,
      });
      expect(telemetry.metricsEnabled).toBe(true);
      telemetry.meter.createCounter('icepack.test.pushed').add(2, { catalog: 'cat' });
      telemetry.tracer.startSpan('not exported').end();
      await telemetry.flush();
      expect(received.map((r) => r.path)).toEqual(['/custom/metrics']);
      expect(received[0]?.body).toContain('icepack.test.pushed');
    } finally {
      await telemetry?.shutdown();
      telemetry = undefined;
      await new Promise((resolve) => collector.close(resolve));
    }
  });
});
