import { baseConfigSchema, duration, secret } from '@icepack/runtime';
import { Topics } from '@icepack/types';
import { z } from 'zod';
import { DEFAULT_LEDGER_BOUNDS } from './domain/ledger.ts';
import { DEFAULT_SCORE_OPTIONS } from './domain/score.ts';

const step = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

/**
 * Bytes of one table-state partition fetched at once: ~650 states of 1,000-partition tables
 * (12.8 KB each) where kafkajs's default 1 MiB holds ~80, so the states in flight drain at a
 * batch's end 8× less often (bench/results/planner-states-in-flight-2026-12-04.md). A fetch
 * holds up to this much of each of `ICEPACK_PLANNER_CONCURRENCY` partitions (24 MiB at the
 * defaults; the runtime's `EnvelopeConsumer`).
 */
export const DEFAULT_FETCH_BYTES_PER_PARTITION = 8 * 1024 * 1024;

/**
 * `{"prod": {"icepack.small-file-threshold": "40"}}`: the deployment default of a catalog's
 * `icepack.*` settings, for a catalog whose definition has no `policy` (the scanner does not
 * see it: prefer the catalog definition).
 */
const catalogPolicy = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({
        code: 'custom',
        message: 'expected JSON: {"<catalog>": {"icepack.<key>": "<value>"}}',
      });
      return z.NEVER;
    }
  })
  .pipe(z.record(z.string(), z.record(z.string(), z.string())));

/** Environment variables of the planner; see README.md. */
export const configSchema = baseConfigSchema('planner').extend({
  /** Bearer token the API requires. */
  ICEPACK_API_TOKEN: secret(z.string().min(16, 'expected at least 16 characters')),
  /**
   * Header an authenticating proxy sets to the signed-in user; the console then accepts it
   * instead of the token (ADR 0020, docs/security.md). Unset: off.
   */
  ICEPACK_CONSOLE_TRUSTED_USER_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, 'expected an HTTP header name, e.g. X-Forwarded-User')
    .optional(),
  ICEPACK_PLANNER_GROUP_ID: z.string().min(1).default('icepack-planner'),
  ICEPACK_PLANNER_TABLE_STATE_TOPIC: z.string().min(1).default(Topics.tableState),
  ICEPACK_PLANNER_TASK_EVENTS_TOPIC: z.string().min(1).default(Topics.taskEvents),
  /** Catalog definitions (their maintenance policy). */
  ICEPACK_PLANNER_CATALOGS_TOPIC: z.string().min(1).default(Topics.catalogs),
  /** Where table states that cannot be handled go (tests keep theirs apart). */
  ICEPACK_PLANNER_DLQ_TOPIC: z.string().min(1).default(Topics.dlq),
  /** Partitions of the table-state topic handled at once (order per table is kept). */
  ICEPACK_PLANNER_CONCURRENCY: step(3),
  /**
   * Table states of one partition handled at once, of different tables (a table's states one
   * after another, in order; ADR 0052): up to CONCURRENCY × this in flight per replica. 32:
   * the best of 4–64 measured (bench/results/planner-states-in-flight-2026-12-04.md).
   */
  ICEPACK_PLANNER_STATES_IN_FLIGHT: step(32),
  /** Bytes of one table-state partition fetched at once (kafkajs `maxBytesPerPartition`). */
  ICEPACK_PLANNER_FETCH_BYTES_PER_PARTITION: step(DEFAULT_FETCH_BYTES_PER_PARTITION),
  ICEPACK_PLANNER_CATALOG_POLICY: catalogPolicy.default({}),
  /** Time between aging passes (cluster-wide; one replica does each). */
  ICEPACK_PLANNER_AGING_INTERVAL: duration().default(60_000),
  /** Time between re-plans of every stored table state (cluster-wide, ±10 % jitter); `0` = off. */
  ICEPACK_PLANNER_REPLAN_INTERVAL: duration().default(600_000),
  /** Stored states read per page of a re-plan pass. */
  ICEPACK_PLANNER_REPLAN_BATCH: step(500),
  /** Consumer group of `icepack.task-events` (when tasks succeeded); default `<group id>-outcomes`. */
  ICEPACK_PLANNER_OUTCOMES_GROUP_ID: z.string().min(1).optional(),
  /** The ledger (`GET /v1/ledger`): how long a succeeded run's entry is kept, per catalog. */
  ICEPACK_PLANNER_LEDGER_RETENTION: duration().default(DEFAULT_LEDGER_BOUNDS.retentionMs),
  /** The ledger: most entries kept per catalog (the oldest go first). */
  ICEPACK_PLANNER_LEDGER_MAX_ENTRIES: step(DEFAULT_LEDGER_BOUNDS.maxEntries),
  /** Time between measurements of the queue-depth gauge (only while metrics are exported). */
  ICEPACK_PLANNER_QUEUE_METRICS_INTERVAL: duration().default(15_000),
  /** Waiting time per aging step, and points per step. */
  ICEPACK_PLANNER_AGING_STEP: duration().default(DEFAULT_SCORE_OPTIONS.agingStepMs),
  ICEPACK_PLANNER_AGING_STEP_POINTS: step(DEFAULT_SCORE_OPTIONS.agingStepPoints),
  /** A task waiting this long runs before every task that is not (oldest first); `0` = off. */
  ICEPACK_PLANNER_OVERDUE_AFTER: duration().default(DEFAULT_SCORE_OPTIONS.overdueAfterMs),
  ICEPACK_PLANNER_SNAPSHOT_STEP: step(DEFAULT_SCORE_OPTIONS.snapshotStep),
  ICEPACK_PLANNER_SNAPSHOT_STEP_POINTS: step(DEFAULT_SCORE_OPTIONS.snapshotStepPoints),
  ICEPACK_PLANNER_SMALL_FILE_STEP: step(DEFAULT_SCORE_OPTIONS.smallFileStep),
  ICEPACK_PLANNER_SMALL_FILE_STEP_POINTS: step(DEFAULT_SCORE_OPTIONS.smallFileStepPoints),
  ICEPACK_PLANNER_DELETE_FILE_STEP: step(DEFAULT_SCORE_OPTIONS.deleteFileStep),
  ICEPACK_PLANNER_DELETE_FILE_STEP_POINTS: step(DEFAULT_SCORE_OPTIONS.deleteFileStepPoints),
});

export type Config = z.output<typeof configSchema>;
