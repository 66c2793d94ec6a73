import { SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { inSpan } from './in-span.ts';
import { startTelemetry } from './start-telemetry.ts';
import type { Telemetry } from './start-telemetry.ts';
import { injectTraceparent } from './trace-context.ts';

let telemetry: Telemetry | undefined;
afterEach(async () => {
  await telemetry?.shutdown();
  telemetry = undefined;
});

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const parent = { traceparent: `00-${traceId}-00f067aa0ba902b7-01` };

describe('inSpan', () => {
  it('continues the trace of a carrier, and what the work sends carries the new span', async () => {
    const exporter = new InMemorySpanExporter();
    telemetry = startTelemetry({ serviceName: 'test', traceExporter: exporter });
    const sent = await inSpan('dispatch merge', { parent }, () =>
      Promise.resolve(injectTraceparent<Record<string, unknown>>({})),
    );
    await telemetry.flush();
    const [span] = exporter.getFinishedSpans();
    expect(span?.spanContext().traceId).toBe(traceId);
    expect(span?.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(String(sent.traceparent)).toBe(`00-${traceId}-${span!.spanContext().spanId}-01`);
  });

  it('marks a failure, but not an expected control-flow error, and rethrows both', async () => {
    const exporter = new InMemorySpanExporter();
    telemetry = startTelemetry({ serviceName: 'test', traceExporter: exporter });
    class Delayed extends Error {}
    const expected = (error: unknown) => error instanceof Delayed;
    await expect(
      inSpan('a', { parent, expected }, () => Promise.reject(new Error('boom'))),
    ).rejects.toThrow('boom');
    await expect(
      inSpan('b', { parent, expected }, () => Promise.reject(new Delayed('later'))),
    ).rejects.toThrow('later');
    await telemetry.flush();
    const [failed, delayed] = exporter.getFinishedSpans();
    expect(failed?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'boom' });
    expect(delayed?.status.code).toBe(SpanStatusCode.UNSET);
  });
});
