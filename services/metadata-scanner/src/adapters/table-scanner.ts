import { formatProblem, policyLayers, resolvePolicy } from '@icepack/policy';
import { computeTableState, isIcebergError, type ManifestCache } from '@icepack/iceberg';
import { UnrecoverableMessageError, type EnvelopeProducer } from '@icepack/runtime';
import { formatTableName, tableKey, type ScanRequest, type TableId } from '@icepack/types';
import { SpanStatusCode, type Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { CatalogHealth } from '../domain/catalog-health.ts';
import type { CatalogRegistry } from '../domain/catalog-registry.ts';
import { activeAfterCatchUp } from '../domain/catch-up-gate.ts';
import type { KeyedSemaphore } from '../domain/keyed-semaphore.ts';
import { isUnchanged, ScanOutcome } from '../domain/scan-outcome.ts';
import type { CatalogClients } from './catalog-clients.ts';
import type { KnownTablesStore } from './known-tables-store.ts';
import type { ScannerMetrics } from './scanner-metrics.ts';
import type { TableStateStore } from './table-state-store.ts';

/** A storage fault while reading manifests: the message is retried. */
export class ScanRetryableError extends Error {
  override readonly name = 'ScanRetryableError';
  readonly retryable = true;
}

/** The catalog failed recently and is in its backoff: try the message again later. */
export class CatalogUnavailableError extends Error {
  override readonly name = 'CatalogUnavailableError';
  readonly retryable = true;
}

export interface TableScannerOptions {
  readonly registry: CatalogRegistry;
  /** Waits until this replica has applied the catalogs and bindings published so far. */
  readonly catchUp: () => Promise<void>;
  readonly clients: CatalogClients;
  readonly health: CatalogHealth;
  readonly semaphore: KeyedSemaphore;
  readonly states: TableStateStore;
  readonly known: KnownTablesStore;
  readonly cache: ManifestCache;
  readonly producer: EnvelopeProducer;
  readonly tableStateTopic: string;
  /**
   * The `TableScanned` version written: 1 (default), or 2 with the partition list packed,
   * once every planner accepts it (ADR 0050).
   */
  readonly tableStateVersion?: number;
  readonly metrics: ScannerMetrics;
  readonly tracer: Tracer;
  /** Called when a catalog fails, so something probes it after its backoff. */
  readonly onCatalogFailure: (catalog: string) => void;
}

/**
 * One scan: load the table; when its metadata is what the last published state was
 * computed from, stop; otherwise compute the TableState (reading only manifests the
 * cache has not seen) and publish it keyed by table. Resolves after the publish was
 * acknowledged, so the caller may commit the request's offset.
 */
export class TableScanner {
  readonly #o: TableScannerOptions;

  constructor(options: TableScannerOptions) {
    this.#o = options;
  }

  async scan(request: ScanRequest, logger: Logger): Promise<ScanOutcome> {
    const { table } = request;
    const catalog = await activeAfterCatchUp(this.#o.registry, table.catalog, this.#o.catchUp);
    if (catalog === undefined) {
      this.#o.metrics.skipped.add(1, { catalog: table.catalog, reason: ScanOutcome.unbound });
      logger.debug({ table: tableKey(table) }, 'catalog not bound; scan request ignored');
      return ScanOutcome.unbound;
    }
    const holdOff = this.#o.health.holdOffMs(catalog.name);
    if (holdOff > 0) {
      throw new CatalogUnavailableError(
        `catalog ${catalog.name} is failing; next attempt in ${holdOff} ms`,
      );
    }
    const release = await this.#o.semaphore.acquire(catalog.name);
    const started = performance.now();
    const span = this.#o.tracer.startSpan('scan table', {
      attributes: {
        'icepack.table': tableKey(table),
        'icepack.catalog': catalog.name,
        'icepack.scan.reason': request.reason,
      },
    });
    try {
      const outcome = await this.#scan(table, logger);
      span.setAttribute('icepack.scan.outcome', outcome);
      const attributes = { catalog: catalog.name };
      if (outcome === ScanOutcome.scanned) {
        this.#o.metrics.scanned.add(1, attributes);
        this.#o.metrics.scanSeconds.record((performance.now() - started) / 1000, attributes);
      } else if (outcome === ScanOutcome.unchanged) {
        this.#o.metrics.skipped.add(1, { ...attributes, reason: outcome });
      } else if (outcome === ScanOutcome.gone) {
        this.#o.metrics.gone.add(1, attributes);
      }
      return outcome;
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      this.#o.metrics.failed.add(1, { catalog: catalog.name });
      throw error;
    } finally {
      span.end();
      release();
    }
  }

  async #scan(table: TableId, logger: Logger): Promise<ScanOutcome> {
    const catalog = this.#o.registry.active(table.catalog)!;
    const client = this.#o.clients.get(catalog);
    const previous = await this.#o.states.get(table);
    let outcome;
    try {
      outcome = await client.loadTable(table, {
        ...(previous?.etag === undefined ? {} : { etag: previous.etag }),
        // Without an ETag, the unchanged location still spares parsing the whole metadata.
        ...(previous === undefined ? {} : { knownMetadataLocation: previous.metadataLocation }),
      });
    } catch (error) {
      if (isIcebergError(error, 'not-found')) return this.#gone(table, logger);
      throw this.#classify(catalog.name, error);
    }
    if (this.#o.health.succeeded(catalog.name)) {
      logger.info({ catalog: catalog.name }, 'catalog reachable again');
    }
    if (outcome.status === 'unchanged') return ScanOutcome.unchanged;
    const loaded = outcome.table;
    if (isUnchanged(previous?.metadataLocation, loaded.metadataLocation)) {
      return ScanOutcome.unchanged;
    }
    let state;
    try {
      // Measured with the policy in force: the table's properties over its namespace's and
      // catalog's settings (the catalog definition), resolved as the planner resolves them.
      // The planner reports bad values (task events); here they are only debug lines.
      const { policy, problems } = resolvePolicy(
        loaded.metadata.properties,
        policyLayers(catalog.policy, table.namespace),
      );
      for (const problem of problems) {
        logger.debug({ table: tableKey(table), problem }, formatProblem(problem));
      }
      state = await computeTableState(loaded, {
        ...(previous === undefined ? {} : { previous: previous.state }),
        cache: this.#o.cache,
        smallFileThresholdBytes: policy.minFileSizeBytes,
      });
    } catch (error) {
      // Manifests are files in the table's storage, not catalog calls: a storage fault is
      // retried, a corrupt file will not heal by itself.
      if (isIcebergError(error) && !error.retryable && error.kind !== 'io') {
        throw new UnrecoverableMessageError(
          `cannot compute the state of ${formatTableName(table)}: ${error.message}`,
          { cause: error },
        );
      }
      throw new ScanRetryableError(
        `cannot read the manifests of ${formatTableName(table)}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    await this.#o.producer.publish(
      this.#o.tableStateTopic,
      'TableScanned',
      tableKey(table),
      state,
      this.#o.tableStateVersion === undefined ? {} : { version: this.#o.tableStateVersion },
    );
    await this.#o.states.put(table, {
      metadataLocation: loaded.metadataLocation,
      ...(loaded.etag === undefined ? {} : { etag: loaded.etag }),
      state,
    });
    logger.debug(
      { table: tableKey(table), metadataLocation: loaded.metadataLocation },
      'table state published',
    );
    return ScanOutcome.scanned;
  }

  async #gone(table: TableId, logger: Logger): Promise<ScanOutcome> {
    const key = tableKey(table);
    await this.#o.producer.tombstone(this.#o.tableStateTopic, key);
    await this.#o.states.delete(table);
    await this.#o.known.remove(table.catalog, key);
    logger.info({ table: key }, 'table no longer exists; tombstone published');
    return ScanOutcome.gone;
  }

  /** Catalog-level faults put the catalog into backoff; a hopeless answer goes to the DLQ. */
  #classify(catalog: string, error: unknown): unknown {
    if (!isIcebergError(error)) return error;
    if (error.retryable || error.kind === 'unauthorized' || error.kind === 'forbidden') {
      this.#o.health.failed(catalog, `${error.kind}: ${error.message}`);
      this.#o.onCatalogFailure(catalog);
      // Retryable from here, whatever the client thinks: credentials get fixed, outages end.
      return new CatalogUnavailableError(error.message, { cause: error });
    }
    return new UnrecoverableMessageError(error.message, { cause: error });
  }
}
