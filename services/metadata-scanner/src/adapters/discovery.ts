import type { EnvelopeProducer } from '@icepack/runtime';
import { BULLMQ_PREFIX, parseTableKey, tableKey, type TableId } from '@icepack/types';
import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CatalogHealth } from '../domain/catalog-health.ts';
import type { CatalogRegistry } from '../domain/catalog-registry.ts';
import { activeAfterCatchUp } from '../domain/catch-up-gate.ts';
import { disappearedTables } from '../domain/discovery-diff.ts';
import type { CatalogClients } from './catalog-clients.ts';
import { walkCatalog } from './catalog-walk.ts';
import type { KnownTablesStore } from './known-tables-store.ts';
import type { ScanRequestBatchPublisher } from './scan-request-batch.ts';
import type { ScannerMetrics } from './scanner-metrics.ts';
import type { TableStateStore } from './table-state-store.ts';

interface DiscoveryJob {
  readonly catalog: string;
}

export interface DiscoveryOptions {
  readonly queueName: string;
  readonly intervalMs: number;
  readonly producerConnection: Redis;
  readonly workerConnection: Redis;
  readonly producer: EnvelopeProducer;
  readonly batch: ScanRequestBatchPublisher;
  readonly scanRequestsTopic: string;
  readonly tableStateTopic: string;
  readonly registry: CatalogRegistry;
  /** Waits until this replica has applied the catalogs and bindings published so far. */
  readonly catchUp: () => Promise<void>;
  readonly clients: CatalogClients;
  readonly health: CatalogHealth;
  readonly known: KnownTablesStore;
  readonly states: TableStateStore;
  readonly metrics: ScannerMetrics;
  readonly logger: Logger;
  readonly onCatalogFailure: (catalog: string) => void;
}

/** Scan requests per produce request during a walk. */
const BATCH = 500;
const SCHEDULER_PREFIX = 'catalog-';

/**
 * Periodic discovery, one run cluster-wide per catalog and interval: a BullMQ job
 * scheduler per bound catalog puts one job on the queue each interval, and whichever
 * replica's worker takes it walks every namespace and table, publishes one `ScanTable`
 * per table (keyed by table, so replicas share the scans by partition), and tombstones the
 * tables the previous complete walk found but this one did not.
 */
export class Discovery {
  readonly #o: DiscoveryOptions;
  readonly #queue: Queue<DiscoveryJob>;
  #worker: Worker<DiscoveryJob> | undefined;

  constructor(options: DiscoveryOptions) {
    this.#o = options;
    this.#queue = new Queue<DiscoveryJob>(options.queueName, {
      connection: options.producerConnection,
      prefix: BULLMQ_PREFIX,
    });
    this.#queue.on('error', (error) =>
      options.logger.warn({ err: error }, 'discovery queue error'),
    );
  }

  /** One scheduler per active catalog; schedulers of catalogs no longer bound are removed. */
  async reconcile(): Promise<void> {
    const active = new Set(this.#o.registry.activeCatalogs().map((c) => c.name));
    for (const name of active) {
      await this.#queue.upsertJobScheduler(
        `${SCHEDULER_PREFIX}${name}`,
        { every: this.#o.intervalMs },
        {
          name: 'discover',
          data: { catalog: name },
          opts: { removeOnComplete: 100, removeOnFail: 100 },
        },
      );
    }
    for (const scheduler of await this.#queue.getJobSchedulers()) {
      const id = scheduler.key;
      if (id.startsWith(SCHEDULER_PREFIX) && !active.has(id.slice(SCHEDULER_PREFIX.length))) {
        await this.#queue.removeJobScheduler(id);
        this.#o.logger.info({ catalog: id.slice(SCHEDULER_PREFIX.length) }, 'discovery stopped');
      }
    }
  }

  start(): void {
    this.#worker = new Worker<DiscoveryJob>(this.#o.queueName, (job) => this.#process(job), {
      connection: this.#o.workerConnection,
      prefix: BULLMQ_PREFIX,
      concurrency: 2,
      // A walk of a large catalog takes a while; the lock is renewed while it runs.
      lockDuration: 60_000,
    });
    this.#worker.on('error', (error) =>
      this.#o.logger.warn({ err: error }, 'discovery worker error'),
    );
    this.#worker.on('failed', (job, error) =>
      this.#o.logger.warn({ err: error, catalog: job?.data.catalog }, 'discovery failed'),
    );
  }

  async close(): Promise<void> {
    await this.#worker?.close();
    await this.#queue.close();
  }

  async #process(job: Job<DiscoveryJob>): Promise<{ tables: number; dropped: number }> {
    const name = job.data.catalog;
    // The replica that scheduled this job had read the binding; this one may not have yet.
    const catalog = await activeAfterCatchUp(this.#o.registry, name, this.#o.catchUp);
    if (catalog === undefined) {
      this.#o.logger.info({ catalog: name }, 'discovery skipped: catalog not bound or defined');
      return { tables: 0, dropped: 0 };
    }
    const logger = this.#o.logger.child({ catalog: name });
    const started = Date.now();
    const found = new Set<string>();
    let batch: TableId[] = [];
    const client = this.#o.clients.get(catalog);
    const flush = async () => {
      await this.#o.batch.publish(this.#o.scanRequestsTopic, batch, 'discovery');
      batch = [];
    };
    try {
      for await (const table of walkCatalog(client)) {
        const key = tableKey(table);
        if (found.has(key)) continue;
        found.add(key);
        batch.push(table);
        if (batch.length >= BATCH) await flush();
      }
      await flush();
    } catch (error) {
      // An incomplete walk proves nothing about missing tables: tombstone nothing.
      const delayMs = this.#o.health.failed(name, (error as Error).message);
      this.#o.onCatalogFailure(name);
      logger.warn({ err: error, delayMs }, 'discovery walk failed; tombstones withheld');
      throw error;
    }
    this.#o.health.succeeded(name);
    const gone = disappearedTables(await this.#o.known.members(name), found);
    for (const key of gone) {
      await this.#o.producer.tombstone(this.#o.tableStateTopic, key);
      await this.#o.states.delete(parseTableKey(key));
    }
    await this.#o.known.replace(name, [...found]);
    this.#o.metrics.discovered.add(found.size, { catalog: name });
    if (gone.length > 0) this.#o.metrics.gone.add(gone.length, { catalog: name });
    logger.info(
      { tables: found.size, dropped: gone.length, durationMs: Date.now() - started },
      'discovery walk finished',
    );
    return { tables: found.size, dropped: gone.length };
  }
}
