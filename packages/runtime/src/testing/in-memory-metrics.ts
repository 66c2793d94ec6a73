import type { Attributes, Meter } from '@opentelemetry/api';
import { DataPointType, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import type { MetricData } from '@opentelemetry/sdk-metrics';

/** Collects on demand, like a Prometheus scrape. */
class OnDemandReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** What one metric's points add up to, over the points whose attributes match. */
export interface MetricTotal {
  /** Counters and gauges: the sum of the values; histograms: the sum of what was recorded. */
  readonly sum: number;
  /** Histograms: how many values were recorded; otherwise the number of matching points. */
  readonly count: number;
}

/**
 * A meter whose measurements a unit test reads back — the metrics twin of
 * `InMemorySpanExporter`. Not registered globally: give `meter` to the code under test.
 */
export class InMemoryMetrics {
  readonly #reader = new OnDemandReader();
  readonly #provider = new MeterProvider({ readers: [this.#reader] });
  readonly meter: Meter = this.#provider.getMeter('test');

  /** The metric named `name` (OTel name, e.g. `icepack.planner.tasks`) over matching points. */
  async total(name: string, attributes: Attributes = {}): Promise<MetricTotal> {
    const { resourceMetrics } = await this.#reader.collect();
    let sum = 0;
    let count = 0;
    for (const scope of resourceMetrics.scopeMetrics) {
      for (const metric of scope.metrics) {
        if (metric.descriptor.name !== name) continue;
        for (const point of pointsOf(metric)) {
          const matches = Object.entries(attributes).every(
            ([key, value]) => point.attributes[key] === value,
          );
          if (!matches) continue;
          sum += point.sum;
          count += point.count;
        }
      }
    }
    return { sum, count };
  }

  /** Shortcut for counters and gauges: the sum of the matching points. */
  async value(name: string, attributes: Attributes = {}): Promise<number> {
    return (await this.total(name, attributes)).sum;
  }

  shutdown(): Promise<void> {
    return this.#provider.shutdown();
  }
}

function pointsOf(
  metric: MetricData,
): { readonly attributes: Attributes; readonly sum: number; readonly count: number }[] {
  if (metric.dataPointType === DataPointType.GAUGE || metric.dataPointType === DataPointType.SUM) {
    return metric.dataPoints.map((p) => ({ attributes: p.attributes, sum: p.value, count: 1 }));
  }
  return metric.dataPoints.map((p) => ({
    attributes: p.attributes,
    sum: p.value.sum ?? 0,
    count: p.value.count,
  }));
}
