import type { KafkaClient } from '@icepack/runtime';
import type { Meter } from '@opentelemetry/api';
import type { Logger } from 'pino';

export interface ConsumerLagOptions {
  readonly kafka: KafkaClient;
  readonly meter: Meter;
  /** Consumer group → the topic it reads. */
  readonly groups: readonly { readonly groupId: string; readonly topic: string }[];
  readonly intervalMs: number;
  readonly logger: Logger;
}

/**
 * `icepack.scanner.consumer.lag`: messages not yet handled per group and topic (end offset
 * minus committed offset, summed over partitions), measured every interval with one admin
 * round trip per group — cheap, and the gauge reports the last measurement.
 */
export class ConsumerLag {
  readonly #o: ConsumerLagOptions;
  readonly #lag = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: ConsumerLagOptions) {
    this.#o = options;
    options.meter
      .createObservableGauge('icepack.scanner.consumer.lag', {
        description: 'Messages waiting per consumer group and topic',
      })
      .addCallback((result) => {
        for (const { groupId, topic } of options.groups) {
          const lag = this.#lag.get(groupId);
          if (lag !== undefined) result.observe(lag, { group: groupId, topic });
        }
      });
  }

  start(): void {
    if (this.#o.intervalMs <= 0) return;
    const tick = () => {
      void this.#measure().finally(() => {
        this.#timer = setTimeout(tick, this.#o.intervalMs);
        this.#timer.unref();
      });
    };
    tick();
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #measure(): Promise<void> {
    const admin = this.#o.kafka.kafka.admin();
    try {
      await admin.connect();
      for (const { groupId, topic } of this.#o.groups) {
        const ends = new Map(
          (await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, BigInt(p.high)]),
        );
        const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
        let lag = 0n;
        for (const p of committed?.partitions ?? []) {
          const end = ends.get(p.partition) ?? 0n;
          const at = BigInt(p.offset) < 0n ? 0n : BigInt(p.offset);
          if (end > at) lag += end - at;
        }
        this.#lag.set(groupId, Number(lag));
      }
    } catch (error) {
      this.#o.logger.debug({ err: error }, 'could not measure consumer lag');
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }
}
