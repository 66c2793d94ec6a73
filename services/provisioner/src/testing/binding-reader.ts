import { randomUUID } from 'node:crypto';
import { createLogger, EnvelopeConsumer, EnvelopeProducer, KafkaClient } from '@icepack/runtime';
import type { Binding } from '@icepack/types';
import { Topics } from '@icepack/types';

/** What a dispatcher would see on `icepack.bindings`: bindings and tombstones by catalog key. */
export interface BindingEvent {
  readonly key: string;
  /** undefined for a tombstone. */
  readonly binding: Binding | undefined;
}

/**
 * Reads `icepack.bindings` from the beginning with the runtime's EnvelopeConsumer, as a
 * dispatcher does, keeping the events whose key is in `catalogs`.
 */
export async function readBindings(brokers: readonly string[], catalogs: ReadonlySet<string>) {
  const logger = createLogger({ service: 'binding-reader', level: 'warn' });
  const kafka = new KafkaClient({ brokers, clientId: 'binding-reader', logger });
  const producer = new EnvelopeProducer(kafka);
  const events: BindingEvent[] = [];
  const consumer = new EnvelopeConsumer(kafka, {
    groupId: `binding-reader-${randomUUID()}`,
    topics: [Topics.bindings],
    fromBeginning: true,
    producer,
    handlers: {
      BindingUpdated: (message) => {
        if (catalogs.has(message.key)) events.push({ key: message.key, binding: message.payload });
      },
    },
    onTombstone: (key) => {
      if (key !== null && catalogs.has(key)) events.push({ key, binding: undefined });
    },
  });
  await consumer.start();
  return {
    events,
    async stop() {
      await consumer.stop();
      await producer.disconnect();
      await kafka.close();
    },
  };
}
