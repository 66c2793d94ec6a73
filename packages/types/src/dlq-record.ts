import { z } from 'zod';
import { count, int64String, isoDateTime, stringMap } from './primitives.ts';

/**
 * A message a consumer could not handle, kept on `icepack.dlq` with the reason. The value
 * is the original bytes (base64), so nothing is lost even when the message was not JSON.
 */
export const dlqRecordSchema = z.object({
  sourceTopic: z.string().min(1),
  partition: count,
  offset: int64String,
  /** The original key as UTF-8 text, null if the message had none. */
  key: z.string().nullable(),
  /** The original value, base64; empty for an empty or null value. */
  value: z.base64(),
  headers: stringMap,
  reason: z.string().min(1),
  failedAt: isoDateTime,
  consumerGroup: z.string().min(1),
});
export type DlqRecord = z.output<typeof dlqRecordSchema>;

/** A raw Kafka message as a consumer sees it (kafkajs header values may be lists). */
export interface DlqSource {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: Uint8Array | string | null | undefined;
  readonly value: Uint8Array | string | null | undefined;
  readonly headers?: Readonly<
    Record<string, Uint8Array | string | readonly (Uint8Array | string)[] | undefined>
  >;
}

function text(bytes: Uint8Array | string): string {
  return typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8');
}

/** Builds the DLQ record for a message that failed with `reason`. */
export function dlqRecordFrom(
  source: DlqSource,
  reason: string,
  consumerGroup: string,
  failedAt: Date = new Date(),
): DlqRecord {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(source.headers ?? {})) {
    if (value === undefined) continue;
    headers[name] = Array.isArray(value)
      ? (value as readonly (Uint8Array | string)[]).map(text).join(',')
      : text(value as Uint8Array | string);
  }
  const value = source.value ?? '';
  return {
    sourceTopic: source.topic,
    partition: source.partition,
    offset: source.offset,
    key: source.key === null || source.key === undefined ? null : text(source.key),
    value: (typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value)).toString(
      'base64',
    ),
    headers,
    reason: reason === '' ? 'unknown' : reason,
    failedAt: failedAt.toISOString(),
    consumerGroup,
  };
}

/** The envelope key of a DLQ record: the original key, else `topic/partition/offset`. */
export function dlqKey(record: DlqRecord): string {
  return record.key ?? `${record.sourceTopic}/${record.partition}/${record.offset}`;
}
