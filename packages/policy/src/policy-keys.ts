// Policy property keys beside their built-in defaults (docs/planner.md lists them all).

const MiB = 1024 * 1024;
const MINUTE_MS = 60 * 1000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** `icepack.*` keys: accepted in catalog settings and as table properties. */
export const PolicyKeys = {
  /** `false` pauses the table (or, as a catalog setting, the whole catalog). */
  enabled: 'icepack.enabled',
  cleanupEnabled: 'icepack.cleanup.enabled',
  mergeEnabled: 'icepack.merge.enabled',
  sortEnabled: 'icepack.sort.enabled',
  targetFileSizeBytes: 'icepack.target-file-size-bytes',
  minFileSizeBytes: 'icepack.min-file-size-bytes',
  maxFileSizeBytes: 'icepack.max-file-size-bytes',
  smallFileThreshold: 'icepack.small-file-threshold',
  deleteFileThreshold: 'icepack.delete-file-threshold',
  newDataShare: 'icepack.sort.new-data-share',
  snapshotThreshold: 'icepack.snapshot-threshold',
  maxSnapshotAgeMs: 'icepack.history.expire.max-snapshot-age-ms',
  minSnapshotsToKeep: 'icepack.history.expire.min-snapshots-to-keep',
  /** `col [asc|desc] [nulls-first|nulls-last], …` */
  sortColumns: 'icepack.sort.columns',
  /** `col, col, …` */
  zorderColumns: 'icepack.zorder.columns',
  /**
   * `col, col`: a Hilbert-curve layout over two numeric, date or timestamp columns (ADR 0033).
   * Below `icepack.sort.columns` and `icepack.zorder.columns` when several are set.
   */
  hilbertColumns: 'icepack.hilbert.columns',
  /**
   * A merge once this many commits followed the last rewrite, even below the file thresholds
   * (new data needed). Unset: no commit-count trigger.
   */
  mergeMaxCommits: 'icepack.merge.max-commits',
  /**
   * Which partitions a merge or sort rewrites: `all` (default: every partition over its
   * thresholds), `recent:<N>` (the N most recently changed), `recent:<N>d` (changed in the last
   * N days) or `selected:<field>=<value>[,…][;…]` (partitions matching any of the filters).
   */
  mergeStrategy: 'icepack.merge.strategy',
  /** A partition-scoped plan rewriting more is split into several tasks (at most 4). */
  maxBytesPerTask: 'icepack.max-bytes-per-task',
  /** Rewrite a file group only when it has at least this many files (`min-input-files`). */
  minInputFiles: 'icepack.merge.min-input-files',
  /** Rewrite a data file with at least this many delete files (`delete-file-threshold` option). */
  perFileDeleteThreshold: 'icepack.merge.per-file-delete-threshold',
  /** Least time from a task's success to the next task of its type on the table (`30m`, `1h`). */
  cleanupMinInterval: 'icepack.cleanup.min-interval',
  mergeMinInterval: 'icepack.merge.min-interval',
  sortMinInterval: 'icepack.sort.min-interval',
  /**
   * Back-off after a task of a type gave up on the table (`failed`): the first wait (`5m`);
   * each further consecutive failure doubles it, up to `icepack.failure-backoff-max`.
   */
  failureBackoff: 'icepack.failure-backoff',
  failureBackoffMax: 'icepack.failure-backoff-max',
  /** Orphan-file removal (ADR 0032): off unless a catalog, namespace or table turns it on. */
  orphanEnabled: 'icepack.orphan.enabled',
  /** Files younger than this are never orphans (`3d`; at least `1d`). */
  orphanMinAge: 'icepack.orphan.min-age',
  /** A quarantine is deleted by the first orphans run this long after it was made (`7d`). */
  orphanQuarantineWindow: 'icepack.orphan.quarantine-window',
  /** Least time from an orphans run's success to the next (`7d`): the scanner lists no storage. */
  orphanInterval: 'icepack.orphan.interval',
  /** At most this many files quarantined by one run (`10000`); the rest wait for the next. */
  orphanMaxFiles: 'icepack.orphan.max-files',
} as const;
export type PolicyKey = (typeof PolicyKeys)[keyof typeof PolicyKeys];

/** Iceberg's own table properties that the policy falls back to. */
export const IcebergKeys = {
  targetFileSizeBytes: 'write.target-file-size-bytes',
  maxSnapshotAgeMs: 'history.expire.max-snapshot-age-ms',
  minSnapshotsToKeep: 'history.expire.min-snapshots-to-keep',
  /** `false`: Iceberg refuses to expire snapshots (files may be shared with other tables). */
  gcEnabled: 'gc.enabled',
} as const;

/** Built-in defaults; Iceberg's where Iceberg has one. */
export const PolicyDefaults = {
  enabled: true,
  targetFileSizeBytes: 512 * MiB,
  /** min = 75 % of the target, max = 180 % (Iceberg's rewrite_data_files defaults). */
  minFileSizeRatio: 0.75,
  maxFileSizeRatio: 1.8,
  smallFileThreshold: 20,
  deleteFileThreshold: 10,
  newDataShare: 0.3,
  snapshotThreshold: 50,
  maxSnapshotAgeMs: 5 * DAY_MS,
  minSnapshotsToKeep: 1,
  minInputFiles: 5,
  perFileDeleteThreshold: 1,
  /** Iceberg's `max-file-group-size-bytes` default: 100 GiB. */
  maxBytesPerTask: 100 * 1024 * MiB,
  /**
   * Least time between a task's success and the next of its type on one table. Longer than a
   * scan after a task takes, so a state from before the task never brings it back.
   */
  minIntervalMs: { cleanup: HOUR_MS, merge: 5 * MINUTE_MS, sort: HOUR_MS, orphans: 7 * DAY_MS },
  /**
   * Unless `icepack.cleanup.min-interval` is set, a table whose snapshot retention is shorter
   * than the hour above is cleaned up at most once per retention, never more often than this floor
   * (the merge's interval): its owner asked for snapshots to go after that long, and an hourly
   * expiry would keep up to an hour more of them (ADR 0035).
   */
  cleanupMinIntervalFloorMs: 5 * MINUTE_MS,
  /**
   * Orphan files: off by default (a location other tools or catalogs write to is not Icepack's
   * to judge); younger than 3 days never touched, never younger than 1 day whatever is set;
   * quarantined for 7 days before deletion (ADR 0032).
   */
  orphans: {
    enabled: false,
    minAgeMs: 3 * DAY_MS,
    minAgeFloorMs: DAY_MS,
    quarantineWindowMs: 7 * DAY_MS,
    maxFiles: 10_000,
  },
  /**
   * Back-off after n consecutive failures of a type on a table: base × 2^(n−1), at most max
   * (5m, 10m, 20m, … 6h from the 8th failure on): a writer conflict clears in minutes, a
   * broken table keeps its slot-time to a few runs a day (ADR 0028).
   */
  failureBackoff: { baseMs: 5 * MINUTE_MS, maxMs: 6 * HOUR_MS },
} as const;
