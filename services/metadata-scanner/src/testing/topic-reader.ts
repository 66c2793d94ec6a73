import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Consumer } from 'kafkajs';

export interface ReadMessage {
  readonly key: string | null;
  /** Parsed JSON envelope; null for a tombstone. */
  readonly value: Record<string, unknown> | null;
  readonly headers: Record<string, string>;
  readonly partition: number;
  /** `Date.now()` when this reader received it (latency measurements). */
  readonly receivedAt: number;
}

/** Collects every message of one topic from the beginning, for assertions. */
export class TopicReader {
  readonly messages: ReadMessage[] = [];
  readonly #consumer: Consumer;

  private constructor(consumer: Consumer) {
    this.#consumer = consumer;
  }

  static async start(brokers: readonly string[], topic: string): Promise<TopicReader> {
    const kafka = new Kafka({
      brokers: [...brokers],
      clientId: 'scanner-test',
      logLevel: logLevel.NOTHING,
    });
    const consumer = kafka.consumer({
      groupId: `scanner-test-${randomUUID()}`,
      maxWaitTimeInMs: 200,
    });
    const reader = new TopicReader(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message, partition }) => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(message.headers ?? {})) {
          if (value !== undefined) headers[name] = value.toString();
        }
        reader.messages.push({
          key: message.key?.toString() ?? null,
          value:
            message.value === null
              ? null
              : (JSON.parse(message.value.toString()) as Record<string, unknown>),
          headers,
          partition,
          receivedAt: Date.now(),
        });
        return Promise.resolve();
      },
    });
    return reader;
  }

  /** Messages with this key, oldest first. */
  byKey(key: string): ReadMessage[] {
    return this.messages.filter((m) => m.key === key);
  }

  /** Polls until `predicate` holds over the messages so far; returns its value. */
  async waitFor<T>(
    predicate: (messages: readonly ReadMessage[]) => T | undefined | false,
    what: string,
    timeoutMs = 60_000,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const result = predicate(this.messages);
      if (result !== undefined && result !== false) return result;
      if (Date.now() > deadline) {
        throw new Error(`timed out waiting for ${what}; ${this.messages.length} messages read`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async stop(): Promise<void> {
    await this.#consumer.disconnect();
  }
}
