import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { EnvelopeConsumer, sleep, type EnvelopeProducer, type KafkaClient } from '@icepack/runtime';
import type { Logger } from 'pino';
import type { CatalogRegistry } from '../domain/catalog-registry.ts';
import { CatchUpGate } from '../domain/catch-up-gate.ts';

/** How long work for an unknown catalog waits for this replica's control plane at most. */
const CATCH_UP_BOUND_MS = 30_000;

export interface ControlPlaneOptions {
  readonly kafka: KafkaClient;
  readonly producer: EnvelopeProducer;
  readonly registry: CatalogRegistry;
  readonly catalogsTopic: string;
  readonly bindingsTopic: string;
  readonly dlqTopic: string;
  readonly groupPrefix: string;
  readonly logger: Logger;
}

/**
 * Follows `icepack.catalogs` and `icepack.bindings` (compacted) into the registry. Every
 * replica needs every definition, so each process reads them from the beginning in a
 * consumer group of its own. `caughtUp` resolves once everything that was on the topics at
 * start-up has been applied: scanning starts only then, so no scan request is dropped for
 * a catalog whose binding simply had not been read yet.
 */
export class ControlPlane {
  readonly #o: ControlPlaneOptions;
  readonly #groupId: string;
  readonly #consumer: EnvelopeConsumer;
  readonly #stopping = new AbortController();
  readonly #gate = new CatchUpGate(() => this.#catchUpBounded());

  constructor(options: ControlPlaneOptions) {
    this.#o = options;
    this.#groupId = `${options.groupPrefix}-control-${hostname()}-${randomUUID().slice(0, 8)}`;
    const { registry, catalogsTopic } = options;
    this.#consumer = new EnvelopeConsumer(options.kafka, {
      groupId: this.#groupId,
      topics: [options.catalogsTopic, options.bindingsTopic],
      producer: options.producer,
      dlqTopic: options.dlqTopic,
      fromBeginning: true,
      handlers: {
        CatalogDefined: (message) => registry.define(message.payload),
        BindingUpdated: (message) => registry.bind(message.payload.catalog),
      },
      onTombstone: (key, ctx) => {
        if (key === null) return;
        if (ctx.topic === catalogsTopic) registry.remove(key);
        else registry.unbind(key);
      },
    });
  }

  start(): Promise<void> {
    return this.#consumer.start();
  }

  /**
   * Resolves once this replica has applied what the topics held when called (or after
   * CATCH_UP_BOUND_MS, or at stop). Work that names a catalog this replica does not know
   * waits for it: another replica may have read a new binding first and produced the work.
   * Concurrent callers share catch-ups (CatchUpGate); it never throws.
   */
  current(): Promise<void> {
    return this.#gate.current();
  }

  async #catchUpBounded(): Promise<void> {
    const signal = AbortSignal.any([this.#stopping.signal, AbortSignal.timeout(CATCH_UP_BOUND_MS)]);
    try {
      await this.caughtUp(signal);
    } catch (error) {
      this.#o.logger.warn({ err: error }, 'could not catch up with the catalogs and bindings');
    }
  }

  /** Resolves when the group's committed offsets reach the ends the topics had when called. */
  async caughtUp(signal: AbortSignal): Promise<void> {
    const admin = this.#o.kafka.kafka.admin();
    await admin.connect();
    try {
      const topics = [this.#o.catalogsTopic, this.#o.bindingsTopic];
      const ends = new Map<string, bigint>();
      for (const topic of topics) {
        for (const p of await admin.fetchTopicOffsets(topic)) {
          if (BigInt(p.high) > BigInt(p.low)) ends.set(`${topic}/${p.partition}`, BigInt(p.high));
        }
      }
      while (ends.size > 0 && !signal.aborted) {
        for (const { topic, partitions } of await admin.fetchOffsets({
          groupId: this.#groupId,
          topics,
        })) {
          for (const p of partitions) {
            const key = `${topic}/${p.partition}`;
            const end = ends.get(key);
            if (end !== undefined && BigInt(p.offset) >= end) ends.delete(key);
          }
        }
        if (ends.size > 0) await sleep(200, signal);
      }
    } finally {
      await admin.disconnect();
    }
  }

  /** Leaves the group and deletes it: nobody will resume from its offsets. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    await this.#consumer.stop();
    const admin = this.#o.kafka.kafka.admin();
    try {
      await admin.connect();
      await admin.deleteGroups([this.#groupId]);
    } catch (error) {
      this.#o.logger.debug(
        { err: error, groupId: this.#groupId },
        'could not delete control group',
      );
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }
}
