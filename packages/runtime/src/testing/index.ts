// Test helpers, imported as `@icepack/runtime/testing`; not for production code.
export { ServiceProcess } from './service-process.ts';
export type { ReadyzResponse, ServiceProcessOptions } from './service-process.ts';
export { parsePrometheusText, sumSamples } from './prometheus-text.ts';
export type { PrometheusSample } from './prometheus-text.ts';
export { InMemoryMetrics } from './in-memory-metrics.ts';
export type { MetricTotal } from './in-memory-metrics.ts';
export { waitUntil } from './wait-until.ts';
export type { WaitUntilOptions } from './wait-until.ts';
export { tempDir, withTempDir } from './temp-dir.ts';
// The OpenTelemetry SDK's span exporter that keeps spans in memory, for trace assertions.
export { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
