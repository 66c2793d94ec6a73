import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { isoDateTime } from './primitives.ts';

/**
 * Every Kafka message is one JSON envelope. `key` repeats the Kafka key so a message is
 * self-describing in logs and in the DLQ. Unknown envelope fields are ignored (additive
 * changes keep the version).
 */
export const envelopeBaseSchema = z.object({
  /** Message type name from `MessageTypes`, e.g. `TableScanned`. */
  type: z.string().min(1),
  /** Payload schema version of that type; an integer ≥ 1. */
  version: z.int().min(1),
  /** Unique per message; consumers use it to recognise a redelivery. */
  id: z.uuid(),
  occurredAt: isoDateTime,
  key: z.string().min(1),
  payload: z.unknown(),
});

export interface Envelope<T extends string = string, P = unknown> {
  readonly type: T;
  readonly version: number;
  readonly id: string;
  readonly occurredAt: string;
  readonly key: string;
  readonly payload: P;
}

/** The envelope schema with a given payload schema. */
export function envelopeSchema<P extends z.ZodType>(payload: P) {
  return envelopeBaseSchema.extend({ payload });
}

export interface EnvelopeOptions {
  /** Default: a random UUID. */
  readonly id?: string;
  /** Default: now. */
  readonly occurredAt?: Date;
  /** The version to write, one the type accepts (`createEnvelope`). Default: the type's `version`. */
  readonly version?: number;
}

/** Wraps an (already valid) payload; `createMessage` also validates it against the registry. */
export function wrapEnvelope<T extends string, P>(
  type: T,
  version: number,
  key: string,
  payload: P,
  options: EnvelopeOptions = {},
): Envelope<T, P> {
  return {
    type,
    version,
    id: options.id ?? randomUUID(),
    occurredAt: (options.occurredAt ?? new Date()).toISOString(),
    key,
    payload,
  };
}
