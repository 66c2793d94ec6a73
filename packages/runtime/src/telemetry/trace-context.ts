import { context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import type { Context, TextMapGetter, TextMapSetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/**
 * Where trace context travels: Kafka headers (values may be Buffers or lists of them), BullMQ
 * job data, SparkApplication annotations. Only `traceparent` and `tracestate` are used.
 */
export type TraceCarrier = Record<string, unknown>;

// W3C trace context, used directly rather than through the global propagator: a message
// must carry its trace even when this service exports no telemetry of its own.
const w3c = new W3CTraceContextPropagator();

const setter: TextMapSetter<TraceCarrier> = {
  set(carrier, key, value) {
    carrier[key] = value;
  },
};

const getter: TextMapGetter<TraceCarrier> = {
  keys: (carrier) => Object.keys(carrier),
  get(carrier, key) {
    const value = carrier[key];
    const first = Array.isArray(value) ? (value as unknown[])[0] : value;
    if (typeof first === 'string') return first;
    if (first instanceof Uint8Array) return Buffer.from(first).toString('utf8');
    return undefined;
  },
};

/**
 * Writes `traceparent` (and `tracestate` when there is one) of the active span, or of
 * `ctx`, into `carrier`; returns the carrier. Writes nothing outside a sampled-or-not span.
 */
export function injectTraceparent<C extends TraceCarrier>(
  carrier: C,
  ctx: Context = context.active(),
): C {
  w3c.inject(ctx, carrier, setter);
  return carrier;
}

/** The context a carrier's `traceparent` describes, on top of `base` (default: root). */
export function extractContext(
  carrier: TraceCarrier | undefined,
  base: Context = ROOT_CONTEXT,
): Context {
  if (carrier === undefined) return base;
  return w3c.extract(base, carrier, getter);
}

/** The trace id of the active span, for log lines; undefined outside a span. */
export function activeTraceId(): string | undefined {
  const span = trace.getSpan(context.active());
  const id = span?.spanContext().traceId;
  return id === undefined || /^0+$/.test(id) ? undefined : id;
}
