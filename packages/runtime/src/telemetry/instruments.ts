import type { Meter, MetricOptions } from '@opentelemetry/api';

/**
 * The attributes an instrument takes: each declared key (required) and each optional one,
 * with a string value from a bounded set — never a table name.
 */
export type InstrumentAttributes<Key extends string, Optional extends string = never> = {
  readonly [K in Key]: string;
} & { readonly [K in Optional]?: string };

interface SpecBase<Key extends string, Optional extends string> {
  /** OpenTelemetry name (`icepack.planner.tasks`); Prometheus: dots → `_`, counters `_total`. */
  readonly name: string;
  readonly description: string;
  /** UCUM unit (`s`, `By`). Default none. */
  readonly unit?: string;
  /** The attribute keys every measurement carries. */
  readonly attributes: readonly Key[];
  /** Keys some measurements carry (e.g. `error_kind` on failures only). Default none. */
  readonly optionalAttributes?: readonly Optional[];
}

export interface CounterSpec<
  Key extends string = string,
  Optional extends string = string,
> extends SpecBase<Key, Optional> {
  readonly kind: 'counter';
}
export interface UpDownCounterSpec<
  Key extends string = string,
  Optional extends string = string,
> extends SpecBase<Key, Optional> {
  readonly kind: 'up-down-counter';
}
export interface HistogramSpec<
  Key extends string = string,
  Optional extends string = string,
> extends SpecBase<Key, Optional> {
  readonly kind: 'histogram';
  /** Explicit bucket boundaries. Default the SDK's. */
  readonly buckets?: readonly number[];
}
/** An observable gauge: its owner reports values from a callback (`addCallback`). */
export interface GaugeSpec<
  Key extends string = string,
  Optional extends string = string,
> extends SpecBase<Key, Optional> {
  readonly kind: 'gauge';
}
export type InstrumentSpec = CounterSpec | UpDownCounterSpec | HistogramSpec | GaugeSpec;

type Declared<S> = Omit<S, 'kind'>;

/** A counter (Prometheus `_total`); `attributes` and `optionalAttributes` type its `add`. */
export function counter<const K extends string, const O extends string = never>(
  spec: Declared<CounterSpec<K, O>>,
): CounterSpec<K, O> {
  return { ...spec, kind: 'counter' };
}

/** An up-down counter (a gauge in Prometheus) that is added to and taken from. */
export function upDownCounter<const K extends string, const O extends string = never>(
  spec: Declared<UpDownCounterSpec<K, O>>,
): UpDownCounterSpec<K, O> {
  return { ...spec, kind: 'up-down-counter' };
}

/** A histogram (`_bucket`, `_sum`, `_count`), with explicit `buckets` where given. */
export function histogram<const K extends string, const O extends string = never>(
  spec: Declared<HistogramSpec<K, O>>,
): HistogramSpec<K, O> {
  return { ...spec, kind: 'histogram' };
}

/** An observable gauge: its owner reports the values from a callback, at each collection. */
export function gauge<const K extends string, const O extends string = never>(
  spec: Declared<GaugeSpec<K, O>>,
): GaugeSpec<K, O> {
  return { ...spec, kind: 'gauge' };
}

// OpenTelemetry's instruments, seen through narrower types: attributes required and keyed.
/** A counter or up-down counter. */
export interface TypedCounter<A> {
  add(value: number, attributes: A): void;
}
export interface TypedHistogram<A> {
  record(value: number, attributes: A): void;
}
export interface TypedGauge<A> {
  /** Called at each collection (each scrape); report every series' value to `result`. */
  addCallback(callback: (result: { observe(value: number, attributes: A): void }) => void): void;
}

/** The instrument a spec makes, typed by its attribute keys. */
export type InstrumentOf<S> =
  S extends CounterSpec<infer K, infer O>
    ? TypedCounter<InstrumentAttributes<K, O>>
    : S extends UpDownCounterSpec<infer K, infer O>
      ? TypedCounter<InstrumentAttributes<K, O>>
      : S extends HistogramSpec<infer K, infer O>
        ? TypedHistogram<InstrumentAttributes<K, O>>
        : S extends GaugeSpec<infer K, infer O>
          ? TypedGauge<InstrumentAttributes<K, O>>
          : never;

export type Instruments<S extends Readonly<Record<string, InstrumentSpec>>> = {
  readonly [P in keyof S]: InstrumentOf<S[P]>;
};

/**
 * Creates a service's instruments from their declarations, under the same keys. The
 * instruments are OpenTelemetry's own (no wrapper on the hot path); only their types are
 * narrowed, so a measurement with an undeclared or a missing key does not compile.
 */
export function createInstruments<const S extends Readonly<Record<string, InstrumentSpec>>>(
  meter: Meter,
  specs: S,
): Instruments<S> {
  const made: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(specs)) made[key] = createInstrument(meter, spec);
  return made as Instruments<S>;
}

function createInstrument(meter: Meter, spec: InstrumentSpec) {
  const options: MetricOptions = {
    description: spec.description,
    ...(spec.unit === undefined ? {} : { unit: spec.unit }),
  };
  switch (spec.kind) {
    case 'counter':
      return meter.createCounter(spec.name, options);
    case 'up-down-counter':
      return meter.createUpDownCounter(spec.name, options);
    case 'histogram':
      return meter.createHistogram(
        spec.name,
        spec.buckets === undefined
          ? options
          : { ...options, advice: { explicitBucketBoundaries: [...spec.buckets] } },
      );
    case 'gauge':
      return meter.createObservableGauge(spec.name, options);
  }
}
