import type { BaseConfig } from '../config/base-config.ts';
import type { TelemetryOptions } from './start-telemetry.ts';

// The OTLP/HTTP default of the OpenTelemetry specification, used when a signal's exporter is
// set to `otlp` without any endpoint.
const DEFAULT_OTLP_ENDPOINT = 'http://localhost:4318';

type TelemetryConfig = Pick<
  BaseConfig,
  | 'ICEPACK_SERVICE_NAME'
  | 'ICEPACK_PROMETHEUS'
  | 'ICEPACK_PROMETHEUS_PORT'
  | 'OTEL_EXPORTER_OTLP_ENDPOINT'
  | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'
  | 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT'
  | 'OTEL_TRACES_EXPORTER'
  | 'OTEL_METRICS_EXPORTER'
  | 'OTEL_METRIC_EXPORT_INTERVAL'
>;

/**
 * Where one signal goes over OTLP, by the specification's rules: `none` turns it off; the
 * signal's own endpoint is used as given; the shared one gets `/v1/<signal>` appended.
 */
function otlpUrl(
  exporter: BaseConfig['OTEL_TRACES_EXPORTER'],
  own: string | undefined,
  shared: string | undefined,
  path: string,
): string | undefined {
  if (exporter === 'none') return undefined;
  if (own !== undefined) return own;
  const base = shared ?? (exporter === 'otlp' ? DEFAULT_OTLP_ENDPOINT : undefined);
  return base === undefined ? undefined : `${base.replace(/\/+$/, '')}/${path}`;
}

/** The telemetry a service's environment asks for (the variables of `baseConfigSchema`). */
export function telemetryOptions(config: TelemetryConfig): TelemetryOptions {
  const otlpTracesUrl = otlpUrl(
    config.OTEL_TRACES_EXPORTER,
    config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    config.OTEL_EXPORTER_OTLP_ENDPOINT,
    'v1/traces',
  );
  const otlpMetricsUrl = otlpUrl(
    config.OTEL_METRICS_EXPORTER,
    config.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT,
    config.OTEL_EXPORTER_OTLP_ENDPOINT,
    'v1/metrics',
  );
  return {
    serviceName: config.ICEPACK_SERVICE_NAME,
    otlpTracesUrl,
    otlpMetricsUrl,
    metricIntervalMs: config.OTEL_METRIC_EXPORT_INTERVAL,
    prometheus: config.ICEPACK_PROMETHEUS ? { port: config.ICEPACK_PROMETHEUS_PORT } : undefined,
  };
}
