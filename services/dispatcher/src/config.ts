import {
  baseConfigSchema,
  catalogAccessConfig,
  duration,
  flag,
  localCatalogsConfig,
  sparkSettingsConfig,
} from '@icepack/runtime';
import { Topics } from '@icepack/types';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { extraJobEnvNames } from './domain/job-environment.ts';
import { DEFAULT_MAX_LAUNCHES } from './domain/launch-gate.ts';

const csv = z.string().transform((text) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== ''),
);

/** Environment variables of the dispatcher; see README.md. */
export const configSchema = baseConfigSchema('dispatcher').extend({
  ...sparkSettingsConfig,
  // The figures read's catalog access (secret sources, link-local addresses) and the catalogs
  // whose `file:` locations it may read (ICEPACK_LOCAL_CATALOGS).
  ...catalogAccessConfig,
  ...localCatalogsConfig,
  /** Serve only these catalogs (comma-separated). Default: every bound catalog. */
  ICEPACK_DISPATCHER_CATALOGS: csv.optional(),
  /** Run directories of the local runner (markers, pids, results); must survive restarts. */
  ICEPACK_DISPATCHER_STATE_DIR: z
    .string()
    .min(1)
    .default(join(homedir(), '.local', 'state', 'icepack', 'dispatcher')),
  ICEPACK_DISPATCHER_CATALOGS_TOPIC: z.string().min(1).default(Topics.catalogs),
  ICEPACK_DISPATCHER_BINDINGS_TOPIC: z.string().min(1).default(Topics.bindings),
  /** Runs of a task: the first plus retries after retryable failures. */
  ICEPACK_TASK_MAX_ATTEMPTS: z.coerce.number().int().min(1).default(3),
  /** First retry backoff; doubles per retry. */
  ICEPACK_TASK_BACKOFF: duration().default(30_000),
  /** A run is cancelled after this long. */
  ICEPACK_TASK_TIMEOUT: duration().default(6 * 3_600_000),
  /** How long a task waits for quota before it looks again. */
  ICEPACK_QUOTA_WAIT: duration().default(15_000),
  /** Size jobs from the catalog's measured runs (ADR 0026); off: from the fixed constants. */
  ICEPACK_SIZING_LEARNED: flag().default(true),
  /** How often each catalog's sizing model is fitted again from its recent runs. */
  ICEPACK_SIZING_REFRESH: duration()
    .pipe(z.number().min(1_000, 'must be at least 1s'))
    .default(60_000),
  /**
   * Batched runs (ADR 0027): small tasks of a catalog share one Spark application, on both
   * runners. Off: every task runs alone.
   */
  ICEPACK_DISPATCHER_BATCH: flag().default(true),
  /**
   * Launches in flight at most in this process, across its catalogs (ADR 0040): a task is
   * taken off its queue only when one of these is free, and holds it until its run is
   * submitted. The others wait in their queues, where priority still applies.
   */
  ICEPACK_DISPATCHER_MAX_LAUNCHES: z.coerce.number().int().min(1).default(DEFAULT_MAX_LAUNCHES),
  /** Tasks in one batch at most (the leader included); 100 is the job's bound. */
  ICEPACK_DISPATCHER_BATCH_MAX_TASKS: z.coerce.number().int().min(2).max(100).default(20),
  /**
   * A resident session per catalog (ADR 0045, local runner): a batch application waits this
   * many seconds for further small tasks of its catalog before it exits. 0 (the default): off,
   * every batch application exits after its list. Needs `ICEPACK_DISPATCHER_BATCH`.
   */
  ICEPACK_DISPATCHER_SESSION_IDLE_SECONDS: z.coerce.number().int().min(0).max(3_600).default(0),
  /** The most tasks one resident session takes before it exits (its own list's included). */
  ICEPACK_DISPATCHER_SESSION_MAX_TASKS: z.coerce.number().int().min(1).max(1_000).default(100),
  /** Local runner: the Iceberg Spark runtime jar (`deploy/local/spark.sh env`). */
  ICEPACK_SPARK_JARS: z.string().min(1).optional(),
  /**
   * Local runner: variables of the dispatcher's environment a job inherits beyond the
   * allow-list (domain/job-environment.ts), comma-separated names.
   */
  ICEPACK_LOCAL_JOB_ENV: csv
    .superRefine((names, ctx) => {
      const checked = extraJobEnvNames(names);
      if (!checked.ok) ctx.addIssue({ code: 'custom', message: checked.problem });
    })
    .optional(),
  /** spark-operator runner: default job image when the group sets none. */
  ICEPACK_SPARK_IMAGE: z.string().min(1).default('ghcr.io/icepack/spark-job:latest'),
  /**
   * spark-operator runner: the operator deletes a finished SparkApplication this long after
   * it ended (`timeToLiveSeconds`). A dispatcher that was down longer than this finds the
   * application gone and runs the task again, so it is at least an hour.
   */
  ICEPACK_SPARK_APP_TTL: duration()
    .pipe(z.number().min(3_600_000, 'must be at least 1h: a shorter TTL can run a task twice'))
    .default(86_400_000),
  /** spark-operator runner: Secret with the catalog credentials, mounted as env by name. */
  ICEPACK_SPARK_SECRET: z.string().min(1).optional(),
});

export type Config = z.output<typeof configSchema>;
