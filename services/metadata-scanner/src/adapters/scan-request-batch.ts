import { injectTraceparent, type KafkaClient } from '@icepack/runtime';
import { createEnvelope, serializeEnvelope, tableKey, type TableId } from '@icepack/types';
import { Partitioners, type Producer } from 'kafkajs';

/**
 * Publishes many `ScanTable` commands in one produce request per batch. A discovery walk
 * of 10 000 tables through the one-message `EnvelopeProducer.publish` costs 10 000 broker
 * round trips; batched it is a few dozen. Same guarantees as the runtime producer:
 * validated envelopes, idempotent, `acks: -1`, murmur2 key partitioning, trace headers.
 */
export class ScanRequestBatchPublisher {
  readonly #producer: Producer;

  constructor(kafka: KafkaClient) {
    this.#producer = kafka.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      retry: { retries: 10 },
      createPartitioner: Partitioners.DefaultPartitioner,
    });
  }

  connect(): Promise<void> {
    return this.#producer.connect();
  }

  disconnect(): Promise<void> {
    return this.#producer.disconnect();
  }

  async publish(topic: string, tables: readonly TableId[], reason: 'discovery'): Promise<void> {
    if (tables.length === 0) return;
    const requestedAt = new Date().toISOString();
    const headers = injectTraceparent({});
    await this.#producer.send({
      topic,
      acks: -1,
      messages: tables.map((table) => {
        const key = tableKey(table);
        const envelope = createEnvelope('ScanTable', key, { table, reason, requestedAt });
        return { key, value: serializeEnvelope(envelope), headers };
      }),
    });
  }
}
