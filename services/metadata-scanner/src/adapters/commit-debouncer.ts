import { extractContext, injectTraceparent, type EnvelopeProducer } from '@icepack/runtime';
import { BULLMQ_PREFIX, tableKey, type MessageEnvelope, type TableId } from '@icepack/types';
import { context } from '@opentelemetry/api';
import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CatalogRegistry } from '../domain/catalog-registry.ts';
import { activeAfterCatchUp } from '../domain/catch-up-gate.ts';
import type { ScannerMetrics } from './scanner-metrics.ts';

interface DebouncedScan {
  readonly table: TableId;
  readonly eventId: string;
  readonly traceparent?: string;
  readonly tracestate?: string;
}

export interface CommitDebouncerOptions {
  readonly queueName: string;
  /** Commits to a table within this window cause one scan, at its end. */
  readonly windowMs: number;
  readonly producerConnection: Redis;
  readonly workerConnection: Redis;
  readonly producer: EnvelopeProducer;
  readonly scanRequestsTopic: string;
  readonly registry: CatalogRegistry;
  /** Waits until this replica has applied the catalogs and bindings published so far. */
  readonly catchUp: () => Promise<void>;
  readonly metrics: ScannerMetrics;
  readonly logger: Logger;
}

/**
 * Commit events → scan requests, one per table per window, agreed across replicas through
 * Redis: each commit adds a job delayed by the window with BullMQ deduplication keyed by
 * table (ttl = window), so later commits in the window are absorbed by the pending job.
 * The scan runs after the last absorbed commit was made (its event arrived before the job
 * fired, and the scan loads the table after that), so no commit goes unseen.
 */
export class CommitDebouncer {
  readonly #o: CommitDebouncerOptions;
  readonly #queue: Queue<DebouncedScan>;
  #worker: Worker<DebouncedScan> | undefined;

  constructor(options: CommitDebouncerOptions) {
    this.#o = options;
    this.#queue = new Queue<DebouncedScan>(options.queueName, {
      connection: options.producerConnection,
      prefix: BULLMQ_PREFIX,
    });
    this.#queue.on('error', (error) => options.logger.warn({ err: error }, 'debounce queue error'));
  }

  /** Handler of `CommitObserved`: resolves once the scan is durably scheduled in Redis. */
  async onCommit(envelope: MessageEnvelope<'CommitObserved'>): Promise<void> {
    const { table } = envelope.payload;
    if (
      (await activeAfterCatchUp(this.#o.registry, table.catalog, this.#o.catchUp)) === undefined
    ) {
      this.#o.metrics.commitsDebounced.add(1, { catalog: table.catalog, outcome: 'unbound' });
      return;
    }
    const data: DebouncedScan = injectTraceparent({ table, eventId: envelope.id });
    const window = this.#o.windowMs;
    const job = await this.#queue.add('scan', data, {
      // The event id: a redelivered event adds nothing, and a deduplicated add is
      // recognisable (it returns the pending job, whose id differs).
      jobId: envelope.id,
      delay: window,
      ...(window > 0 ? { deduplication: { id: tableKey(table), ttl: window } } : {}),
      removeOnComplete: true,
      removeOnFail: 1_000,
      attempts: 20,
      backoff: { type: 'exponential', delay: 1_000 },
    });
    // A deduplicated add returns the job already pending for this table.
    const outcome = job.id === envelope.id ? 'scheduled' : 'debounced';
    this.#o.metrics.commitsDebounced.add(1, { catalog: table.catalog, outcome });
  }

  start(): void {
    this.#worker = new Worker<DebouncedScan>(this.#o.queueName, (job) => this.#process(job), {
      connection: this.#o.workerConnection,
      prefix: BULLMQ_PREFIX,
      concurrency: 16,
    });
    this.#worker.on('error', (error) =>
      this.#o.logger.warn({ err: error }, 'debounce worker error'),
    );
    this.#worker.on('failed', (job, error) =>
      this.#o.logger.warn(
        { err: error, table: job?.data.table },
        'debounced scan not requested yet',
      ),
    );
  }

  async close(): Promise<void> {
    await this.#worker?.close();
    await this.#queue.close();
  }

  async #process(job: Job<DebouncedScan>): Promise<void> {
    const { table, eventId } = job.data;
    // Continue the commit event's trace: the scan request (and the scan) join it.
    const carrier = { traceparent: job.data.traceparent, tracestate: job.data.tracestate };
    await context.with(extractContext(carrier), () =>
      this.#o.producer.publish(this.#o.scanRequestsTopic, 'ScanTable', tableKey(table), {
        table,
        reason: 'commit',
        requestedAt: new Date().toISOString(),
        cause: { eventId },
      }),
    );
  }
}
