import {
  baseConfigSchema,
  catalogAccessConfig,
  duration,
  flag,
  localCatalogsConfig,
} from '@icepack/runtime';
import { Topics } from '@icepack/types';
import { z } from 'zod';

const positiveInt = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

/** Environment variables of the metadata-scanner; see README.md. */
export const configSchema = baseConfigSchema('metadata-scanner').extend({
  ...catalogAccessConfig,
  ...localCatalogsConfig,
  /**
   * Catalogs and bindings to start with, until (or besides) the provisioner publishes them:
   * a path to a YAML or JSON file, or the JSON document itself (starts with `{`).
   */
  ICEPACK_SCANNER_BOOTSTRAP: z.string().min(1).optional(),
  /** Consumer group of the scan-request consumer; the commit consumer adds `-commits`. */
  ICEPACK_SCANNER_GROUP_ID: z.string().min(1).default('icepack-metadata-scanner'),
  ICEPACK_SCANNER_COMMITS_TOPIC: z.string().min(1).default(Topics.commits),
  ICEPACK_SCANNER_SCAN_REQUESTS_TOPIC: z.string().min(1).default(Topics.scanRequests),
  ICEPACK_SCANNER_TABLE_STATE_TOPIC: z.string().min(1).default(Topics.tableState),
  ICEPACK_SCANNER_CATALOGS_TOPIC: z.string().min(1).default(Topics.catalogs),
  ICEPACK_SCANNER_BINDINGS_TOPIC: z.string().min(1).default(Topics.bindings),
  ICEPACK_SCANNER_DLQ_TOPIC: z.string().min(1).default(Topics.dlq),
  /** Partitions of scan-requests topics this service creates when missing. */
  ICEPACK_SCANNER_SCAN_PARTITIONS: positiveInt(12),
  /** Time between two discovery walks of a catalog (one walk cluster-wide). */
  ICEPACK_SCANNER_DISCOVERY_INTERVAL: duration().default(5 * 60_000),
  /** BullMQ queue of the discovery job schedulers (one per bound catalog). */
  ICEPACK_SCANNER_DISCOVERY_QUEUE: z.string().min(1).default('icepack-discovery'),
  /** Commits to one table within this window cause one scan, at the window's end. */
  ICEPACK_SCANNER_DEBOUNCE: duration().default(500),
  /** BullMQ queue that holds the debounced commit scans. */
  ICEPACK_SCANNER_DEBOUNCE_QUEUE: z.string().min(1).default('icepack-scan-debounce'),
  /** Prefix of this service's own Redis keys (table states, known tables). */
  ICEPACK_SCANNER_REDIS_PREFIX: z.string().min(1).default('icepack:scanner'),
  /** Scans of one catalog running at once in this process. */
  ICEPACK_SCANNER_CATALOG_CONCURRENCY: positiveInt(8),
  /** Partitions of the scan-request topic handled at once (order per table is kept). */
  ICEPACK_SCANNER_PARTITIONS_CONCURRENCY: positiveInt(12),
  /** Bound of the manifest cache shared by all tables. */
  ICEPACK_SCANNER_MANIFEST_CACHE_MB: positiveInt(64),
  /** Largest catalog response read (MiB); a larger one fails the call as a bad response. */
  ICEPACK_SCANNER_CATALOG_MAX_RESPONSE_MB: positiveInt(64),
  /**
   * Ask catalogs for gzip-compressed answers. Off by default: a scanner next to its catalog
   * spends less CPU (and the catalog too) on plain answers; on for a catalog behind a slow or
   * metered link (ADR 0038).
   */
  ICEPACK_SCANNER_CATALOG_GZIP: flag().default(false),
  /** Per-request timeout towards a catalog. */
  ICEPACK_SCANNER_CATALOG_TIMEOUT: duration().default(30_000),
  /** Longest wait before a failed catalog is tried again (backoff doubles up to it). */
  ICEPACK_SCANNER_CATALOG_MAX_BACKOFF: duration().default(60_000),
  /**
   * The `TableScanned` version written: 1, or 2 (the partition list packed, about half the
   * bytes; the planner stores it as sent, ADR 0050). Write 2 once every planner accepts it.
   */
  ICEPACK_SCANNER_TABLE_STATE_VERSION: z.coerce
    .number()
    .pipe(z.union([z.literal(1), z.literal(2)], { error: 'expected 1 or 2' }))
    .default(1),
  /** How often consumer lag is measured for the metric; `0` turns it off. */
  ICEPACK_SCANNER_LAG_INTERVAL: duration().default(30_000),
});

export type Config = z.output<typeof configSchema>;
