import { describe, expect, it } from 'vitest';
import { baseConfigSchema } from '../config/base-config.ts';
import { ConfigError } from '../config/config-error.ts';
import { loadConfig } from '../config/load-config.ts';
import { telemetryOptions } from './telemetry-config.ts';

const required = {
  ICEPACK_KAFKA_BROKERS: 'kafka:9092',
  ICEPACK_REDIS_URL: 'redis://redis:6379',
};

const optionsFor = (env: Record<string, string>) =>
  telemetryOptions(loadConfig(baseConfigSchema('planner'), { ...required, ...env }));

describe('telemetryOptions', () => {
  it('exports nothing when no variable asks for it', () => {
    expect(optionsFor({})).toEqual({
      serviceName: 'planner',
      otlpTracesUrl: undefined,
      otlpMetricsUrl: undefined,
      metricIntervalMs: undefined,
      prometheus: undefined,
    });
  });

  it('sends both signals to the shared endpoint, each under its own path', () => {
    expect(optionsFor({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toMatchObject({
      otlpTracesUrl: 'http://collector:4318/v1/traces',
      otlpMetricsUrl: 'http://collector:4318/v1/metrics',
    });
  });

  it("uses a signal's own endpoint as given, and the interval in milliseconds", () => {
    const options = optionsFor({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'https://metrics.example/ingest',
      OTEL_METRIC_EXPORT_INTERVAL: '60000',
    });
    expect(options).toMatchObject({
      otlpTracesUrl: 'http://collector:4318/v1/traces',
      otlpMetricsUrl: 'https://metrics.example/ingest',
      metricIntervalMs: 60_000,
    });
  });

  it('turns one signal off with none, and defaults otlp to the local collector', () => {
    expect(
      optionsFor({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_METRICS_EXPORTER: 'none' }),
    ).toMatchObject({ otlpTracesUrl: 'http://c:4318/v1/traces', otlpMetricsUrl: undefined });
    expect(optionsFor({ OTEL_METRICS_EXPORTER: 'otlp' })).toMatchObject({
      otlpTracesUrl: undefined,
      otlpMetricsUrl: 'http://localhost:4318/v1/metrics',
    });
  });

  it('serves Prometheus on the service port, or on its own', () => {
    expect(optionsFor({ ICEPACK_PROMETHEUS: 'on' }).prometheus).toEqual({ port: undefined });
    expect(
      optionsFor({ ICEPACK_PROMETHEUS: 'on', ICEPACK_PROMETHEUS_PORT: '9464' }).prometheus,
    ).toEqual({ port: 9464 });
  });

  it('names the variable of an exporter or interval it cannot use', () => {
    let problems: readonly string[] = [];
    try {
      optionsFor({ OTEL_METRICS_EXPORTER: 'prometheus', OTEL_METRIC_EXPORT_INTERVAL: '5s' });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems = error.problems;
    }
    expect(problems.join('\n')).toMatch(/^OTEL_METRICS_EXPORTER: expected otlp or none/m);
    expect(problems.join('\n')).toMatch(/^OTEL_METRIC_EXPORT_INTERVAL: expected milliseconds/m);
  });
});
