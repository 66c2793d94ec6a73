import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Attributes, Span, Tracer } from '@opentelemetry/api';
import { extractContext } from './trace-context.ts';
import type { TraceCarrier } from './trace-context.ts';

export interface InSpanOptions {
  /**
   * Carrier of the parent's `traceparent` (BullMQ job data, a task) when the work continues a
   * trace that did not arrive through the active context. Default: the active context.
   */
  readonly parent?: TraceCarrier;
  /** Default `SpanKind.INTERNAL`. */
  readonly kind?: SpanKind;
  /** Default none. */
  readonly attributes?: Attributes;
  /** Default the global tracer `@icepack/runtime`. */
  readonly tracer?: Tracer;
  /** Errors that are control flow, not failures (BullMQ's `DelayedError`). Default none. */
  readonly expected?: (error: unknown) => boolean;
}

/**
 * Runs `work` inside a new span, so everything it sends (Kafka messages, jobs) carries that
 * span's trace; ends the span when the work settles and marks it failed on an error. The work
 * gets the span, to add what it learns (an outcome) as attributes.
 */
export async function inSpan<T>(
  name: string,
  options: InSpanOptions,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const tracer = options.tracer ?? trace.getTracer('@icepack/runtime');
  const parent =
    options.parent === undefined
      ? context.active()
      : extractContext(options.parent, context.active());
  const span = tracer.startSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes ?? {} },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (error) {
    if (options.expected?.(error) !== true) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    }
    throw error;
  } finally {
    span.end();
  }
}
