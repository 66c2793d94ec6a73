import { formatPath } from '@icepack/types';
import { IcebergKeys, PolicyDefaults, PolicyKeys } from './policy-keys.ts';
import {
  durationAtLeast,
  integerAtLeast,
  parseBoolean,
  parseColumnList,
  parseByteSize,
  parseDuration,
  parseHilbertColumns,
  parseMergeStrategy,
  parseShare,
  parseSortColumns,
  type MergeStrategy,
  type PropertyParser,
  type SortColumn,
} from './property-parsers.ts';

/** Where a policy value came from, lowest precedence first. */
export const PolicySource = {
  default: 'default',
  catalog: 'catalog',
  namespace: 'namespace',
  table: 'table',
} as const;
export type PolicySource = (typeof PolicySource)[keyof typeof PolicySource];

/** The effective maintenance policy of one table. */
export interface Policy {
  /**
   * False when the table, its namespace or its catalog is paused (`icepack.enabled=false`), or
   * an operator paused it from the console (the `console` layer).
   */
  readonly enabled: boolean;
  /** Who paused it; null when enabled. */
  readonly pausedBy: PausedBy;
  readonly taskTypes: {
    readonly cleanup: boolean;
    readonly merge: boolean;
    readonly sort: boolean;
    /** Off by default (`icepack.orphan.enabled`). */
    readonly orphans: boolean;
  };
  readonly targetFileSizeBytes: number;
  readonly minFileSizeBytes: number;
  readonly maxFileSizeBytes: number;
  readonly smallFileThreshold: number;
  readonly deleteFileThreshold: number;
  /** 0..1 */
  readonly newDataShare: number;
  readonly snapshotThreshold: number;
  readonly maxSnapshotAgeMs: number;
  readonly minSnapshotsToKeep: number;
  readonly minInputFiles: number;
  readonly perFileDeleteThreshold: number;
  /** Which partitions a merge or sort rewrites (`icepack.merge.strategy`). */
  readonly mergeStrategy: MergeStrategy;
  /** A partition-scoped rewrite of more bytes is split into several tasks. */
  readonly maxBytesPerTask: number;
  /** Commits since the last rewrite that trigger a merge by themselves; null = no such trigger. */
  readonly mergeMaxCommits: number | null;
  /** Least time from a task's success to the next task of its type, in milliseconds. */
  readonly minIntervalMs: {
    readonly cleanup: number;
    readonly merge: number;
    readonly sort: number;
    /** `icepack.orphan.interval`: the scanner lists no storage, so orphans run on a cadence. */
    readonly orphans: number;
  };
  /** Orphan files (ADR 0032). */
  readonly orphans: {
    /** Files younger than this are never orphans; at least a day. */
    readonly minAgeMs: number;
    readonly quarantineWindowMs: number;
    readonly maxFiles: number;
  };
  /** Back-off after consecutive failures of a type: base × 2^(n−1), capped at max (ms). */
  readonly failureBackoff: { readonly baseMs: number; readonly maxMs: number };
  /** False when the table sets `gc.enabled=false`: Iceberg refuses to expire its snapshots. */
  readonly gcEnabled: boolean;
  /** Empty when not set; the table's own sort order then applies. */
  readonly sortColumns: readonly SortColumn[];
  readonly zorderColumns: readonly string[];
  /** Two columns for a Hilbert-curve layout; empty when not set (or another layout is). */
  readonly hilbertColumns: readonly string[];
}

/** Who paused a table: the console (an operator), or the layer whose `icepack.enabled=false` did. */
export type PausedBy = 'console' | 'catalog' | 'namespace' | 'table' | null;

/**
 * A property value that could not be used (the value below it, or the default, applies), or
 * — source `scan` — a table state measured under another policy than the one in force.
 */
export interface PolicyProblem {
  readonly key: string;
  readonly value: string;
  readonly reason: string;
  readonly source: 'catalog' | 'namespace' | 'table' | 'scan';
}

/** The `icepack.*` settings a layer above the table sets (`Catalog.policy` has this shape). */
export type PolicySettings = Readonly<Record<string, string>>;

/**
 * What a catalog definition says about policy: catalog-wide settings and, per namespace
 * (dotted name, `sales.orders`), settings that override them for that namespace's tables.
 */
export interface CatalogPolicy {
  readonly settings?: PolicySettings;
  readonly namespaces?: Readonly<Record<string, PolicySettings>>;
}

/** The layers above a table's own properties, lowest precedence first. */
export interface PolicyLayers {
  readonly catalog?: PolicySettings;
  readonly namespace?: PolicySettings;
  /**
   * An operator's pause from the console, of the table or of its catalog (ADR 0024): above
   * every other layer — no property can lift it — and it carries no other setting.
   */
  readonly consolePaused?: boolean;
}

/**
 * The catalog and namespace layers a table of `namespace` gets from its catalog's policy, and
 * the console's pause when `consolePaused`.
 */
export function policyLayers(
  catalogPolicy: CatalogPolicy | undefined,
  namespace: readonly string[],
  consolePaused = false,
): PolicyLayers {
  return {
    catalog: catalogPolicy?.settings ?? {},
    namespace: catalogPolicy?.namespaces?.[namespace.join('.')] ?? {},
    ...(consolePaused ? { consolePaused } : {}),
  };
}

export interface ResolvedPolicy {
  readonly policy: Policy;
  readonly problems: readonly PolicyProblem[];
}

type Props = Readonly<Record<string, string>>;
interface Layer {
  readonly source: 'catalog' | 'namespace' | 'table';
  readonly key: string;
  readonly props: Props;
}

const KNOWN_KEYS = new Set<string>(Object.values(PolicyKeys));

function describe(value: unknown): string {
  if (Array.isArray(value)) return value.join(', ');
  if (value !== null && typeof value === 'object' && 'kind' in value) {
    return String(value.kind);
  }
  return String(value);
}

/**
 * The cleanup interval when none is set: the default hour, or the table's snapshot retention
 * when that is shorter (at least `cleanupMinIntervalFloorMs`), so a table over the snapshot
 * threshold keeps its snapshots for about twice the retention an owner set at most (ADR 0035).
 */
export function defaultCleanupIntervalMs(maxSnapshotAgeMs: number): number {
  return Math.min(
    PolicyDefaults.minIntervalMs.cleanup,
    Math.max(PolicyDefaults.cleanupMinIntervalFloorMs, maxSnapshotAgeMs),
  );
}

/**
 * Resolves built-in defaults ← catalog settings ← namespace settings ← table properties. A
 * bad value is reported as a problem and the value below it (or the default) is used. The
 * one resolution of the scanner (what it measures with), the planner and the dispatcher.
 */
export function resolvePolicy(tableProperties: Props, layers: PolicyLayers = {}): ResolvedPolicy {
  const problems: PolicyProblem[] = [];
  const catalogSettings = layers.catalog ?? {};
  const namespaceSettings = layers.namespace ?? {};

  function pick<T>(fallback: T, layers: readonly Layer[], parse: PropertyParser<T>): T {
    let value = fallback;
    for (const layer of layers) {
      const text = layer.props[layer.key];
      if (text === undefined) continue;
      const parsed = parse(text);
      if (parsed.ok) value = parsed.value;
      else {
        problems.push({
          key: layer.key,
          value: text,
          source: layer.source,
          reason: `${parsed.reason}; using ${describe(value)}`,
        });
      }
    }
    return value;
  }
  const above: Layer['source'][] = ['catalog', 'namespace'];
  const propsOf = {
    catalog: catalogSettings,
    namespace: namespaceSettings,
    table: tableProperties,
  };
  // The usual chain: catalog setting, namespace setting, then the table's `icepack.*` property.
  const icepack = (key: string): Layer[] => [
    ...above.map((source) => ({ source, key, props: propsOf[source] })),
    { source: 'table', key, props: tableProperties },
  ];
  // Where Iceberg has its own table property, it sits between the layers above the table and
  // `icepack.*`: the table's own setting is more specific than a catalog- or namespace-wide one.
  const withIceberg = (key: string, icebergKey: string): Layer[] => [
    ...above.map((source) => ({ source, key, props: propsOf[source] })),
    { source: 'table', key: icebergKey, props: tableProperties },
    { source: 'table', key, props: tableProperties },
  ];
  // The most specific layer that sets `key`.
  const sourceOf = (key: string): Layer['source'] =>
    tableProperties[key] !== undefined
      ? 'table'
      : namespaceSettings[key] !== undefined
        ? 'namespace'
        : 'catalog';

  // A size that contradicts the target: reported against the layer that set it.
  function sizeProblem(
    key: string,
    relation: string,
    target: number,
    fallback: number,
  ): PolicyProblem {
    const source = sourceOf(key);
    return {
      key,
      value: propsOf[source][key] ?? '',
      source,
      reason: `${relation} the target file size ${target}; using ${fallback}`,
    };
  }

  const positive = integerAtLeast(1);
  const nonNegative = integerAtLeast(0);

  // A pause is not overridden below: a table cannot re-enable itself in a paused catalog or
  // namespace.
  const [catalogSwitch, namespaceSwitch, tableSwitch] = icepack(PolicyKeys.enabled);
  const catalogEnabled = pick(true, [catalogSwitch!], parseBoolean);
  const namespaceEnabled = pick(true, [namespaceSwitch!], parseBoolean);
  const tableEnabled = pick(true, [tableSwitch!], parseBoolean);

  const targetFileSizeBytes = pick(
    PolicyDefaults.targetFileSizeBytes,
    withIceberg(PolicyKeys.targetFileSizeBytes, IcebergKeys.targetFileSizeBytes),
    positive,
  );
  const derivedMin = Math.floor(targetFileSizeBytes * PolicyDefaults.minFileSizeRatio);
  const derivedMax = Math.floor(targetFileSizeBytes * PolicyDefaults.maxFileSizeRatio);
  let minFileSizeBytes = pick(derivedMin, icepack(PolicyKeys.minFileSizeBytes), nonNegative);
  if (minFileSizeBytes > targetFileSizeBytes) {
    problems.push(
      sizeProblem(PolicyKeys.minFileSizeBytes, 'must not exceed', targetFileSizeBytes, derivedMin),
    );
    minFileSizeBytes = derivedMin;
  }
  let maxFileSizeBytes = pick(derivedMax, icepack(PolicyKeys.maxFileSizeBytes), positive);
  if (maxFileSizeBytes < targetFileSizeBytes) {
    problems.push(
      sizeProblem(
        PolicyKeys.maxFileSizeBytes,
        'must not be below',
        targetFileSizeBytes,
        derivedMax,
      ),
    );
    maxFileSizeBytes = derivedMax;
  }

  const sortColumns = pick<SortColumn[]>([], icepack(PolicyKeys.sortColumns), parseSortColumns);
  let zorderColumns = pick<string[]>([], icepack(PolicyKeys.zorderColumns), parseColumnList);
  if (sortColumns.length > 0 && zorderColumns.length > 0) {
    problems.push({
      key: PolicyKeys.zorderColumns,
      value: zorderColumns.join(', '),
      source: sourceOf(PolicyKeys.zorderColumns),
      reason: `${PolicyKeys.sortColumns} is set too; a table is sorted one way, so using ${PolicyKeys.sortColumns}`,
    });
    zorderColumns = [];
  }
  // A table has one layout: sort columns, then z-order, then Hilbert, whichever is set first.
  let hilbertColumns = pick<string[]>([], icepack(PolicyKeys.hilbertColumns), parseHilbertColumns);
  const otherLayout =
    sortColumns.length > 0
      ? PolicyKeys.sortColumns
      : zorderColumns.length > 0
        ? PolicyKeys.zorderColumns
        : null;
  if (hilbertColumns.length > 0 && otherLayout !== null) {
    problems.push({
      key: PolicyKeys.hilbertColumns,
      value: hilbertColumns.join(', '),
      source: sourceOf(PolicyKeys.hilbertColumns),
      reason: `${otherLayout} is set too; a table is sorted one way, so using ${otherLayout}`,
    });
    hilbertColumns = [];
  }

  const maxSnapshotAgeMs = pick(
    PolicyDefaults.maxSnapshotAgeMs,
    withIceberg(PolicyKeys.maxSnapshotAgeMs, IcebergKeys.maxSnapshotAgeMs),
    nonNegative,
  );

  const consolePaused = layers.consolePaused === true;
  const enabled = !consolePaused && catalogEnabled && namespaceEnabled && tableEnabled;
  const policy: Policy = {
    enabled,
    pausedBy: consolePaused
      ? 'console'
      : !catalogEnabled
        ? 'catalog'
        : !namespaceEnabled
          ? 'namespace'
          : !tableEnabled
            ? 'table'
            : null,
    taskTypes: {
      cleanup: pick(true, icepack(PolicyKeys.cleanupEnabled), parseBoolean),
      merge: pick(true, icepack(PolicyKeys.mergeEnabled), parseBoolean),
      sort: pick(true, icepack(PolicyKeys.sortEnabled), parseBoolean),
      orphans: pick(
        PolicyDefaults.orphans.enabled,
        icepack(PolicyKeys.orphanEnabled),
        parseBoolean,
      ),
    },
    targetFileSizeBytes,
    minFileSizeBytes,
    maxFileSizeBytes,
    smallFileThreshold: pick(
      PolicyDefaults.smallFileThreshold,
      icepack(PolicyKeys.smallFileThreshold),
      nonNegative,
    ),
    deleteFileThreshold: pick(
      PolicyDefaults.deleteFileThreshold,
      icepack(PolicyKeys.deleteFileThreshold),
      nonNegative,
    ),
    newDataShare: pick(PolicyDefaults.newDataShare, icepack(PolicyKeys.newDataShare), parseShare),
    snapshotThreshold: pick(
      PolicyDefaults.snapshotThreshold,
      icepack(PolicyKeys.snapshotThreshold),
      nonNegative,
    ),
    maxSnapshotAgeMs,
    minSnapshotsToKeep: pick(
      PolicyDefaults.minSnapshotsToKeep,
      withIceberg(PolicyKeys.minSnapshotsToKeep, IcebergKeys.minSnapshotsToKeep),
      positive,
    ),
    minInputFiles: pick(PolicyDefaults.minInputFiles, icepack(PolicyKeys.minInputFiles), positive),
    perFileDeleteThreshold: pick(
      PolicyDefaults.perFileDeleteThreshold,
      icepack(PolicyKeys.perFileDeleteThreshold),
      positive,
    ),
    mergeMaxCommits: pick<number | null>(null, icepack(PolicyKeys.mergeMaxCommits), positive),
    mergeStrategy: pick<MergeStrategy>(
      { kind: 'all' },
      icepack(PolicyKeys.mergeStrategy),
      parseMergeStrategy,
    ),
    maxBytesPerTask: pick(
      PolicyDefaults.maxBytesPerTask,
      icepack(PolicyKeys.maxBytesPerTask),
      parseByteSize,
    ),
    minIntervalMs: {
      cleanup: pick(
        defaultCleanupIntervalMs(maxSnapshotAgeMs),
        icepack(PolicyKeys.cleanupMinInterval),
        parseDuration,
      ),
      merge: pick(
        PolicyDefaults.minIntervalMs.merge,
        icepack(PolicyKeys.mergeMinInterval),
        parseDuration,
      ),
      sort: pick(
        PolicyDefaults.minIntervalMs.sort,
        icepack(PolicyKeys.sortMinInterval),
        parseDuration,
      ),
      orphans: pick(
        PolicyDefaults.minIntervalMs.orphans,
        icepack(PolicyKeys.orphanInterval),
        parseDuration,
      ),
    },
    orphans: {
      minAgeMs: pick(
        PolicyDefaults.orphans.minAgeMs,
        icepack(PolicyKeys.orphanMinAge),
        durationAtLeast(
          PolicyDefaults.orphans.minAgeFloorMs,
          '1d',
          "a writer's files exist before its commit names them",
        ),
      ),
      quarantineWindowMs: pick(
        PolicyDefaults.orphans.quarantineWindowMs,
        icepack(PolicyKeys.orphanQuarantineWindow),
        parseDuration,
      ),
      maxFiles: pick(PolicyDefaults.orphans.maxFiles, icepack(PolicyKeys.orphanMaxFiles), positive),
    },
    failureBackoff: {
      baseMs: pick(
        PolicyDefaults.failureBackoff.baseMs,
        icepack(PolicyKeys.failureBackoff),
        parseDuration,
      ),
      maxMs: pick(
        PolicyDefaults.failureBackoff.maxMs,
        icepack(PolicyKeys.failureBackoffMax),
        parseDuration,
      ),
    },
    // Read as Iceberg reads it (Java's Boolean.parseBoolean): set to anything but "true"
    // (any case), GC is off.
    gcEnabled: (tableProperties[IcebergKeys.gcEnabled] ?? 'true').toLowerCase() === 'true',
    sortColumns,
    zorderColumns,
    hilbertColumns,
  };

  for (const [source, props] of [
    ['catalog', catalogSettings],
    ['namespace', namespaceSettings],
    ['table', tableProperties],
  ] as const) {
    for (const [key, value] of Object.entries(props)) {
      if (key.startsWith('icepack.') && !KNOWN_KEYS.has(key)) {
        problems.push({
          key,
          value,
          source,
          reason: 'unknown icepack property; ignored (a typo?)',
        });
      }
    }
  }
  return { policy, problems };
}

/**
 * The problems of settings meant for a layer above tables (a catalog definition's `policy`):
 * a key that is not a known `icepack.*` key, or a value its parser refuses. Empty = valid.
 */
export function settingsProblems(settings: PolicySettings): PolicyProblem[] {
  const problems: PolicyProblem[] = [];
  for (const [key, value] of Object.entries(settings)) {
    if (!key.startsWith('icepack.')) {
      problems.push({
        key,
        value,
        source: 'catalog',
        reason: 'only icepack.* keys are policy settings (Iceberg properties belong on the table)',
      });
    }
  }
  return [...problems, ...resolvePolicy({}, { catalog: settings }).problems];
}

/**
 * The small-file bound a state was measured with (`TableState.files.smallFileThresholdBytes`)
 * against the one the policy in force gives: when they differ (the policy changed after the
 * scan, or the scanner resolves another policy), the state's small-file figures answer
 * another question until the next scan. Null when they agree.
 */
export function measuredUnderOtherPolicy(
  measuredThresholdBytes: number,
  policy: Pick<Policy, 'minFileSizeBytes'>,
): PolicyProblem | null {
  if (measuredThresholdBytes === policy.minFileSizeBytes) return null;
  return {
    key: PolicyKeys.minFileSizeBytes,
    value: String(measuredThresholdBytes),
    source: 'scan',
    reason:
      `the state counts files under ${measuredThresholdBytes} bytes as small, the policy in ` +
      `force ${policy.minFileSizeBytes}; its small-file figures are from another policy until the next scan`,
  };
}

/** `icepack.small-file-threshold = "abc" (table): expected …; using 20` — for logs and events. */
export function formatProblem(problem: PolicyProblem): string {
  if (problem.source === 'scan') return `policy mismatch ${problem.key}: ${problem.reason}`;
  return `bad policy value ${problem.key}=${JSON.stringify(problem.value)} (${problem.source}): ${problem.reason}`;
}

/** One bad entry of a catalog definition's `policy`, with the path of its field. */
export interface PolicyFieldIssue {
  /** `policy.settings["icepack.snapshot-threshold"]`, `policy.namespaces["sales.eu"]["icepack.enabled"]` */
  readonly path: string;
  readonly message: string;
}

/**
 * Checks a catalog definition's `policy` (the provisioner refuses the definition with 400 and
 * these paths): every key known, every value readable. Empty = valid.
 */
export function catalogPolicyIssues(policy: CatalogPolicy | undefined): PolicyFieldIssue[] {
  if (policy === undefined) return [];
  const issues: PolicyFieldIssue[] = [];
  const check = (path: PropertyKey[], settings: PolicySettings): void => {
    for (const problem of settingsProblems(settings)) {
      issues.push({
        path: formatPath([...path, problem.key]),
        message: `${JSON.stringify(problem.value)}: ${problem.reason}`,
      });
    }
  };
  check(['policy', 'settings'], policy.settings ?? {});
  for (const [namespace, settings] of Object.entries(policy.namespaces ?? {})) {
    check(['policy', 'namespaces', namespace], settings);
  }
  return issues;
}
