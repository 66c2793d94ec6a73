import { context, metrics, propagation, trace } from '@opentelemetry/api';
import type { Meter, ProxyTracerProvider, Tracer } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import type { IMetricReader } from '@opentelemetry/sdk-metrics';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import type { SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace';
import type { MetricsEndpoint } from '../http/create-http-server.ts';

export interface PrometheusOptions {
  /**
   * Serve `/metrics` on its own port. Default: not set — the exporter starts no server and
   * the service's HTTP server serves `/metrics` through {@link Telemetry.metricsEndpoint}.
   */
  readonly port?: number;
}

export interface TelemetryOptions {
  /** `service.name` of every span and metric. Required. */
  readonly serviceName: string;
  /** `service.version`. Default none. */
  readonly serviceVersion?: string;
  /** OTLP/HTTP base URL (`http://collector:4318`); traces and metrics are pushed there. Default off. */
  readonly otlpEndpoint?: string;
  /** Full OTLP/HTTP URL for traces; wins over `otlpEndpoint`. Default `<otlpEndpoint>/v1/traces`. */
  readonly otlpTracesUrl?: string;
  /** Full OTLP/HTTP URL for metrics; wins over `otlpEndpoint`. Default `<otlpEndpoint>/v1/metrics`. */
  readonly otlpMetricsUrl?: string;
  /** Export metrics for Prometheus to scrape. Default off. */
  readonly prometheus?: PrometheusOptions;
  /** Extra span exporter, exported synchronously (tests: `InMemorySpanExporter`). Default none. */
  readonly traceExporter?: SpanExporter;
  /** How often metrics are pushed over OTLP. Default 15 000 ms. */
  readonly metricIntervalMs?: number;
}

export interface Telemetry {
  readonly tracer: Tracer;
  readonly meter: Meter;
  /** Serves Prometheus text; set when `prometheus` is on without its own port. */
  readonly metricsEndpoint?: MetricsEndpoint;
  /** True when anything is exported. */
  readonly exporting: boolean;
  /**
   * True when metrics are exported (OTLP or Prometheus). Off, the meter is a no-op: a
   * service skips measurements that cost I/O (queue depth read from Redis).
   */
  readonly metricsEnabled: boolean;
  /** Exports what is buffered now: spans (they wait for async resource detection otherwise) and metrics. */
  flush(): Promise<void>;
  /** Flushes and stops the exporters, then unregisters the global providers. */
  shutdown(): Promise<void>;
}

/**
 * Starts the OpenTelemetry Node SDK. Call it first in `main`, before any client is made;
 * `telemetryOptions(config)` turns the service's environment into the options.
 *
 * Without an OTLP URL, `prometheus` or `traceExporter` nothing is exported and the tracer
 * and meter are no-ops — but the async-local context manager and the W3C propagator are
 * still registered, so trace context received in a Kafka header still flows into the
 * messages and jobs this service produces.
 */
export function startTelemetry(options: TelemetryOptions): Telemetry {
  const spanProcessors: SpanProcessor[] = [];
  const metricReaders: IMetricReader[] = [];
  if (options.traceExporter !== undefined) {
    spanProcessors.push(new SimpleSpanProcessor({ exporter: options.traceExporter }));
  }
  const otlp = options.otlpEndpoint?.replace(/\/+$/, '');
  const tracesUrl = options.otlpTracesUrl ?? (otlp === undefined ? undefined : `${otlp}/v1/traces`);
  const metricsUrl =
    options.otlpMetricsUrl ?? (otlp === undefined ? undefined : `${otlp}/v1/metrics`);
  if (tracesUrl !== undefined) {
    spanProcessors.push(
      new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: tracesUrl }) }),
    );
  }
  if (metricsUrl !== undefined) {
    metricReaders.push(
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: metricsUrl }),
        exportIntervalMillis: options.metricIntervalMs ?? 15_000,
      }),
    );
  }
  let metricsEndpoint: MetricsEndpoint | undefined;
  if (options.prometheus !== undefined) {
    const ownPort = options.prometheus.port;
    const exporter = new PrometheusExporter(
      ownPort === undefined ? { preventServerStart: true } : { port: ownPort, host: '0.0.0.0' },
    );
    metricReaders.push(exporter);
    if (ownPort === undefined) {
      metricsEndpoint = { handle: (req, res) => exporter.getMetricsRequestHandler(req, res) };
    }
  }
  const exporting = spanProcessors.length > 0 || metricReaders.length > 0;

  const sdk = new NodeSDK({
    serviceName: options.serviceName,
    // Explicit (possibly empty) lists: the SDK must not fall back to OTEL_*_EXPORTER
    // defaults and start pushing to localhost:4318 when nothing was configured.
    spanProcessors,
    metricReaders,
    logRecordProcessors: [],
    instrumentations: [],
    autoDetectResources: exporting,
  });
  sdk.start();

  return {
    tracer: trace.getTracer(options.serviceName, options.serviceVersion),
    meter: metrics.getMeter(options.serviceName, options.serviceVersion),
    metricsEndpoint,
    exporting,
    metricsEnabled: metricReaders.length > 0,
    async flush() {
      const tracerProvider = trace.getTracerProvider() as ProxyTracerProvider;
      const delegate = tracerProvider.getDelegate() as { forceFlush?: () => Promise<void> };
      const meterProvider = metrics.getMeterProvider() as { forceFlush?: () => Promise<void> };
      await Promise.all([delegate.forceFlush?.(), meterProvider.forceFlush?.()]);
    },
    async shutdown() {
      await sdk.shutdown();
      // Lets a test (or a restart in-process) register fresh providers.
      trace.disable();
      metrics.disable();
      propagation.disable();
      context.disable();
    },
  };
}
