import { Kafka } from 'kafkajs';
import type { Admin } from 'kafkajs';
import type { Logger } from 'pino';
import type { CheckResult } from '../http/readiness.ts';
import type { KafkaTransport } from './kafka-transport.ts';
import { kafkaLogCreator, kafkaLogLevel } from './kafka-log.ts';

export interface KafkaClientOptions {
  /** `host:port` of one or more brokers. Required. */
  readonly brokers: readonly string[];
  /** Client id on every request (quotas, broker logs). Required. */
  readonly clientId: string;
  readonly logger: Logger;
  /** Time to establish a TCP connection. Default 3000 ms. */
  readonly connectionTimeoutMs?: number;
  /** Time a request may take. Default 30 000 ms. */
  readonly requestTimeoutMs?: number;
  /** First retry delay of a failed request (kafkajs doubles it, with jitter). Default 300 ms. */
  readonly initialRetryMs?: number;
  /** Longest retry delay. Default 30 000 ms. */
  readonly maxRetryMs?: number;
  /** Retries of one request before it fails to the caller. Default 8 (about a minute). */
  readonly retries?: number;
  /** TLS and SASL ({@link kafkaTransport}); default plaintext without authentication. */
  readonly transport?: KafkaTransport;
}

/**
 * One kafkajs client per process, with the retry policy and logging applied, and the
 * connection health that `/readyz` reports. Producers and consumers are made from it.
 */
export class KafkaClient {
  readonly kafka: Kafka;
  readonly logger: Logger;
  // A second client without retries for the readiness probe: it must fail fast, and
  // kafkajs applies the client-level retry policy to connecting.
  readonly #probeKafka: Kafka;
  readonly clientId: string;
  #lastError: { message: string; at: string } | undefined;
  #probe: Admin | undefined;
  readonly #unhealthy = new Map<string, string>();

  constructor(options: KafkaClientOptions) {
    this.logger = options.logger.child({ component: 'kafka' });
    this.clientId = options.clientId;
    const common = {
      brokers: [...options.brokers],
      clientId: options.clientId,
      connectionTimeout: options.connectionTimeoutMs ?? 3_000,
      requestTimeout: options.requestTimeoutMs ?? 30_000,
      logLevel: kafkaLogLevel(options.logger.level),
      logCreator: kafkaLogCreator(options.logger),
      ...options.transport,
    };
    this.kafka = new Kafka({
      ...common,
      retry: {
        initialRetryTime: options.initialRetryMs ?? 300,
        maxRetryTime: options.maxRetryMs ?? 30_000,
        retries: options.retries ?? 8,
      },
    });
    this.#probeKafka = new Kafka({ ...common, logLevel: 0, retry: { retries: 0 } });
  }

  /** Remembers the latest fault, shown by {@link health}. */
  recordError(source: string, error: unknown): void {
    this.#lastError = {
      message: `${source}: ${(error as Error).message}`,
      at: new Date().toISOString(),
    };
  }

  /** A component (consumer, producer) reports it cannot work; `null` clears it. */
  setUnhealthy(component: string, reason: string | null): void {
    if (reason === null) this.#unhealthy.delete(component);
    else this.#unhealthy.set(component, reason);
  }

  /**
   * Ready when a broker answers a metadata request and no producer or consumer reports a
   * fault. Fails fast: the probe client does not retry (the readiness timeout bounds it).
   */
  async health(): Promise<CheckResult> {
    try {
      this.#probe ??= this.#probeKafka.admin({ retry: { retries: 0 } });
      await this.#probe.connect();
      await this.#probe.describeCluster();
    } catch (error) {
      this.recordError('probe', error);
      // A fresh probe client next time: kafkajs keeps a broken one's state.
      const probe = this.#probe;
      this.#probe = undefined;
      void probe?.disconnect().catch(() => undefined);
      return { ok: false, detail: `brokers unreachable: ${(error as Error).message}` };
    }
    if (this.#unhealthy.size > 0) {
      return {
        ok: false,
        detail: [...this.#unhealthy].map(([name, reason]) => `${name}: ${reason}`).join('; '),
      };
    }
    return {
      ok: true,
      detail:
        this.#lastError === undefined
          ? undefined
          : `last error ${this.#lastError.at}: ${this.#lastError.message}`,
    };
  }

  async close(): Promise<void> {
    await this.#probe?.disconnect();
    this.#probe = undefined;
  }
}
