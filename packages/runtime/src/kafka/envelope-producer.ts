import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Tracer } from '@opentelemetry/api';
import { createEnvelope, serializeEnvelope } from '@icepack/types';
import type { Envelope, MessagePayload, MessageType, MessageTypes } from '@icepack/types';
import { CompressionTypes, Partitioners } from 'kafkajs';
import type { IHeaders, Message, Producer, TopicMessages } from 'kafkajs';
import type { z } from 'zod';
import { Attr } from '../telemetry/attributes.ts';
import { injectTraceparent } from '../telemetry/trace-context.ts';
import type { KafkaClient } from './kafka-client.ts';
import { nextBatchSize } from './produce-batch.ts';

export interface EnvelopeProducerOptions {
  /** Tracer for `publish` spans. Default the global tracer `@icepack/runtime`. */
  readonly tracer?: Tracer;
  /** Compress batches with gzip. Default false (messages are small JSON). */
  readonly gzip?: boolean;
  /**
   * Retries of one send before `publish` rejects. Default 10 (about two and a half minutes
   * with the client's backoff). kafkajs would retry an idempotent send forever; a bound
   * lets a caller (a consumer handler, an API request) fail and be retried by its own
   * policy instead of hanging through an outage. Duplicates that a late retry may cause
   * are harmless: every envelope has an id and handlers are idempotent.
   */
  readonly retries?: number;
}

/** A send waiting for the request in flight to be acknowledged. */
interface QueuedSend {
  readonly topic: string;
  readonly message: Message;
  readonly bytes: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Publishes Icepack envelopes. The payload is validated before it leaves (a bad message
 * never reaches a topic); the trace context rides in the `traceparent`/`tracestate`
 * headers; every send waits for all in-sync replicas (`acks: -1`) on an idempotent
 * producer, so a retried send is not written twice. Sends made while a request is in flight
 * go together in the next one, in the order they were made (`nextBatchSize`): a scanner
 * publishing a state per table pays one produce request per batch, not per table.
 */
export class EnvelopeProducer {
  readonly #client: KafkaClient;
  readonly #producer: Producer;
  readonly #tracer: Tracer;
  readonly #gzip: boolean;
  #connected = false;
  readonly #queue: QueuedSend[] = [];
  #draining = false;

  constructor(client: KafkaClient, options: EnvelopeProducerOptions = {}) {
    this.#client = client;
    this.#tracer = options.tracer ?? trace.getTracer('@icepack/runtime');
    this.#gzip = options.gzip ?? false;
    this.#producer = client.kafka.producer({
      idempotent: true,
      // Order per partition survives retries only with one request in flight in kafkajs.
      maxInFlightRequests: 1,
      retry: { retries: options.retries ?? 10 },
      // Java-compatible murmur2 on the key: a table always lands on the same partition.
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    this.#producer.on(this.#producer.events.CONNECT, () => {
      this.#connected = true;
      client.setUnhealthy('producer', null);
    });
    this.#producer.on(this.#producer.events.DISCONNECT, () => {
      this.#connected = false;
    });
  }

  get connected(): boolean {
    return this.#connected;
  }

  async connect(): Promise<void> {
    await this.#producer.connect();
  }

  /**
   * Validates `payload` against the registry entry of `type`, wraps it in an envelope and
   * sends it keyed by `key`. Resolves with the envelope once the brokers acknowledged it.
   * `version`: one the type accepts (default the type's own), e.g. `TableScanned` 2.
   */
  async publish<T extends MessageType>(
    topic: string,
    type: T,
    key: string,
    payload: z.input<(typeof MessageTypes)[T]['payload']>,
    options: { readonly version?: number } = {},
  ): Promise<Envelope<T, MessagePayload<T>>> {
    const envelope = createEnvelope(type, key, payload, options);
    await this.#send(topic, key, serializeEnvelope(envelope), {
      [Attr.icepackMessageType]: type,
      [Attr.messagingMessageId]: envelope.id,
    });
    return envelope;
  }

  /** Writes a null value for `key`: on a compacted topic, "this key is gone". */
  async tombstone(topic: string, key: string): Promise<void> {
    await this.#send(topic, key, null, { [Attr.icepackMessageType]: 'tombstone' });
  }

  /** Sends bytes as they are (the DLQ keeps originals; tests write malformed messages). */
  async sendRaw(
    topic: string,
    key: string | null,
    value: Buffer | string | null,
    headers: IHeaders = {},
  ): Promise<void> {
    await this.#send(topic, key, value, {}, headers);
  }

  async disconnect(): Promise<void> {
    await this.#producer.disconnect();
  }

  async #send(
    topic: string,
    key: string | null,
    value: Buffer | string | null,
    attributes: Record<string, string>,
    extraHeaders: IHeaders = {},
  ): Promise<void> {
    const span = this.#tracer.startSpan(`send ${topic}`, {
      kind: SpanKind.PRODUCER,
      attributes: {
        [Attr.messagingSystem]: 'kafka',
        [Attr.messagingOperation]: 'send',
        [Attr.messagingDestination]: topic,
        ...(key === null ? {} : { [Attr.kafkaMessageKey]: key }),
        ...attributes,
      },
    });
    const headers: IHeaders = { ...extraHeaders };
    // The consumer continues this span's trace.
    injectTraceparent(headers, trace.setSpan(context.active(), span));
    try {
      await this.#enqueue(topic, { key, value, headers });
    } catch (error) {
      this.#client.recordError(`send ${topic}`, error);
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  }

  /** Resolves when the request carrying `message` was acknowledged; rejects with its error. */
  #enqueue(topic: string, message: Message): Promise<void> {
    return new Promise((resolve, reject) => {
      const bytes = byteLength(message.value) + byteLength(message.key);
      this.#queue.push({ topic, message, bytes, resolve, reject });
      if (this.#draining) return;
      this.#draining = true;
      // After the current task: publishes made in the same turn share the first request too.
      queueMicrotask(() => void this.#drain());
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, nextBatchSize(this.#queue.map((s) => s.bytes)));
      const byTopic = new Map<string, Message[]>();
      for (const send of batch) {
        const messages = byTopic.get(send.topic);
        if (messages === undefined) byTopic.set(send.topic, [send.message]);
        else messages.push(send.message);
      }
      const topicMessages: TopicMessages[] = [...byTopic].map(([topic, messages]) => ({
        topic,
        messages,
      }));
      try {
        await this.#producer.sendBatch({
          acks: -1,
          compression: this.#gzip ? CompressionTypes.GZIP : CompressionTypes.None,
          topicMessages,
        });
        for (const send of batch) send.resolve();
      } catch (error) {
        // The request failed as a whole: every publish in it fails to its caller, whose own
        // policy retries it (a duplicate of a part the broker did take is harmless).
        for (const send of batch) send.reject(error);
      }
    }
    this.#draining = false;
  }
}

function byteLength(value: Message['value'] | Message['key']): number {
  if (value === null || value === undefined) return 0;
  return typeof value === 'string' ? Buffer.byteLength(value) : value.length;
}
