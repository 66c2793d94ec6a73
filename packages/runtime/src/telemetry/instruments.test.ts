import {
  AggregationTemporality,
  DataPointType,
  MeterProvider,
  MetricReader,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import type { Meter } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { counter, createInstruments, gauge, histogram, upDownCounter } from './instruments.ts';

class OnDemandReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const SPECS = {
  runs: counter({
    name: 'test.runs',
    description: 'Runs, by catalog and outcome',
    attributes: ['catalog', 'outcome'],
    optionalAttributes: ['error_kind'],
  }),
  inFlight: upDownCounter({
    name: 'test.in_flight',
    description: 'Runs now',
    attributes: ['catalog'],
  }),
  seconds: histogram({
    name: 'test.duration.seconds',
    description: 'Run time',
    unit: 's',
    attributes: ['catalog'],
    buckets: [1, 10],
  }),
  bytes: counter({
    name: 'test.bytes',
    description: 'Bytes',
    unit: 'By',
    attributes: ['catalog'],
  }),
  slots: gauge({ name: 'test.slots', description: 'Slots', attributes: ['catalog'] }),
};

async function collect(): Promise<Map<string, MetricData>> {
  const reader = new OnDemandReader();
  const own = new MeterProvider({ readers: [reader] });
  const instruments = createInstruments(own.getMeter('test'), SPECS);
  instruments.runs.add(1, { catalog: 'lake', outcome: 'failed', error_kind: 'oom' });
  instruments.runs.add(1, { catalog: 'lake', outcome: 'ok' });
  instruments.inFlight.add(1, { catalog: 'lake' });
  instruments.inFlight.add(-1, { catalog: 'lake' });
  instruments.seconds.record(5, { catalog: 'lake' });
  instruments.bytes.add(100, { catalog: 'lake' });
  instruments.slots.addCallback((result) => result.observe(4, { catalog: 'lake' }));
  const { resourceMetrics } = await reader.collect();
  await own.shutdown();
  const metrics = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
  return new Map(metrics.map((metric) => [metric.descriptor.name, metric]));
}

/** What kind of instrument made `metric`, in the spec's words. */
function kindOf(metric: MetricData): string {
  switch (metric.dataPointType) {
    case DataPointType.SUM:
      return metric.isMonotonic ? 'counter' : 'up-down-counter';
    case DataPointType.HISTOGRAM:
      return 'histogram';
    case DataPointType.GAUGE:
      return 'gauge';
    case DataPointType.EXPONENTIAL_HISTOGRAM:
      return 'exponential histogram';
  }
}

describe('createInstruments', () => {
  it('makes each declared instrument with its name, kind, description and unit', async () => {
    const metrics = await collect();
    const described = [...metrics.values()].map((metric) => ({
      name: metric.descriptor.name,
      type: kindOf(metric),
      description: metric.descriptor.description,
      unit: metric.descriptor.unit,
    }));
    expect(described).toEqual(
      expect.arrayContaining([
        {
          name: 'test.runs',
          type: 'counter',
          description: 'Runs, by catalog and outcome',
          unit: '',
        },
        {
          name: 'test.in_flight',
          type: 'up-down-counter',
          description: 'Runs now',
          unit: '',
        },
        {
          name: 'test.duration.seconds',
          type: 'histogram',
          description: 'Run time',
          unit: 's',
        },
        { name: 'test.bytes', type: 'counter', description: 'Bytes', unit: 'By' },
        {
          name: 'test.slots',
          type: 'gauge',
          description: 'Slots',
          unit: '',
        },
      ]),
    );
    expect(described).toHaveLength(5);
  });

  it('records with the attributes given, the optional ones only where given', async () => {
    const runs = (await collect()).get('test.runs');
    expect(runs?.aggregationTemporality).toBe(AggregationTemporality.CUMULATIVE);
    expect(runs?.dataPoints.map((p) => [p.attributes, p.value])).toEqual([
      [{ catalog: 'lake', outcome: 'failed', error_kind: 'oom' }, 1],
      [{ catalog: 'lake', outcome: 'ok' }, 1],
    ]);
  });

  it('gives a histogram its bucket boundaries, and a gauge what its callback observes', async () => {
    const metrics = await collect();
    const seconds = metrics.get('test.duration.seconds');
    expect(seconds?.dataPointType).toBe(DataPointType.HISTOGRAM);
    const point = seconds?.dataPoints[0]?.value;
    expect(typeof point === 'object' && 'buckets' in point && point.buckets.boundaries).toEqual([
      1, 10,
    ]);
    expect(metrics.get('test.slots')?.dataPoints.map((p) => [p.attributes, p.value])).toEqual([
      [{ catalog: 'lake' }, 4],
    ]);
  });
});

// Checked by the compiler (`pnpm typecheck`), never run: a measurement with an undeclared
// key (a table name would be one) or without a declared key does not compile.
export function measurementsThatDoNotCompile(meter: Meter): void {
  const instruments = createInstruments(meter, SPECS);
  // @ts-expect-error a key not declared
  instruments.runs.add(1, { catalog: 'lake', outcome: 'ok', table: 'lake.db.t' });
  // @ts-expect-error a declared key missing
  instruments.runs.add(1, { catalog: 'lake' });
  // @ts-expect-error attributes are not optional
  instruments.seconds.record(1);
}
