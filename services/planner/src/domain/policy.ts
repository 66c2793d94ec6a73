import { IcebergKeys, PolicyDefaults, PolicyKeys } from './policy-keys.ts';
import {
  integerAtLeast,
  parseBoolean,
  parseColumnList,
  parseDuration,
  parseShare,
  parseSortColumns,
  type PropertyParser,
  type SortColumn,
} from './property-parsers.ts';

/** Where a policy value came from, lowest precedence first. */
export const PolicySource = { default: 'default', catalog: 'catalog', table: 'table' } as const;
export type PolicySource = (typeof PolicySource)[keyof typeof PolicySource];

/** The effective maintenance policy of one table. */
export interface Policy {
  /** False when the table or its catalog is paused (`icepack.enabled=false`). */
  readonly enabled: boolean;
  /** Who paused it; null when enabled. */
  readonly pausedBy: 'catalog' | 'table' | null;
  readonly taskTypes: {
    readonly cleanup: boolean;
    readonly merge: boolean;
    readonly sort: boolean;
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
  /** Least time from a task's success to the next task of its type, in milliseconds. */
  readonly minIntervalMs: {
    readonly cleanup: number;
    readonly merge: number;
    readonly sort: number;
  };
  /** False when the table sets `gc.enabled=false`: Iceberg refuses to expire its snapshots. */
  readonly gcEnabled: boolean;
  /** Empty when not set; the table's own sort order then applies. */
  readonly sortColumns: readonly SortColumn[];
  readonly zorderColumns: readonly string[];
}

/** A property value that could not be used; the value below it (or the default) applies. */
export interface PolicyProblem {
  readonly key: string;
  readonly value: string;
  readonly reason: string;
  readonly source: 'catalog' | 'table';
}

export interface ResolvedPolicy {
  readonly policy: Policy;
  readonly problems: readonly PolicyProblem[];
}

type Props = Readonly<Record<string, string>>;
interface Layer {
  readonly source: 'catalog' | 'table';
  readonly key: string;
  readonly props: Props;
}

const KNOWN_KEYS = new Set<string>(Object.values(PolicyKeys));

function describe(value: unknown): string {
  return Array.isArray(value) ? value.join(', ') : String(value);
}

/**
 * Resolves built-in defaults ← catalog settings ← table properties. A bad value is
 * reported as a problem and the value below it (catalog setting or default) is used.
 */
export function resolvePolicy(tableProperties: Props, catalogSettings: Props = {}): ResolvedPolicy {
  const problems: PolicyProblem[] = [];

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
  // The usual chain: catalog setting, then the table's `icepack.*` property.
  const icepack = (key: string): Layer[] => [
    { source: 'catalog', key, props: catalogSettings },
    { source: 'table', key, props: tableProperties },
  ];
  // Where Iceberg has its own table property, it sits between the catalog and `icepack.*`:
  // the table's own setting is more specific than a catalog-wide one.
  const withIceberg = (key: string, icebergKey: string): Layer[] => [
    { source: 'catalog', key, props: catalogSettings },
    { source: 'table', key: icebergKey, props: tableProperties },
    { source: 'table', key, props: tableProperties },
  ];

  // A size that contradicts the target: reported against the layer that set it.
  function sizeProblem(
    key: string,
    relation: string,
    target: number,
    fallback: number,
  ): PolicyProblem {
    const fromTable = tableProperties[key] !== undefined;
    return {
      key,
      value: (fromTable ? tableProperties[key] : catalogSettings[key]) ?? '',
      source: fromTable ? PolicySource.table : PolicySource.catalog,
      reason: `${relation} the target file size ${target}; using ${fallback}`,
    };
  }

  const positive = integerAtLeast(1);
  const nonNegative = integerAtLeast(0);

  const catalogEnabled = pick(true, [icepack(PolicyKeys.enabled)[0]!], parseBoolean);
  const tableEnabled = pick(true, [icepack(PolicyKeys.enabled)[1]!], parseBoolean);

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
    const fromTable = tableProperties[PolicyKeys.zorderColumns] !== undefined;
    problems.push({
      key: PolicyKeys.zorderColumns,
      value: zorderColumns.join(', '),
      source: fromTable ? PolicySource.table : PolicySource.catalog,
      reason: `${PolicyKeys.sortColumns} is set too; a table is sorted one way, so using ${PolicyKeys.sortColumns}`,
    });
    zorderColumns = [];
  }

  const enabled = catalogEnabled && tableEnabled;
  const policy: Policy = {
    enabled,
    pausedBy: !catalogEnabled ? 'catalog' : !tableEnabled ? 'table' : null,
    taskTypes: {
      cleanup: pick(true, icepack(PolicyKeys.cleanupEnabled), parseBoolean),
      merge: pick(true, icepack(PolicyKeys.mergeEnabled), parseBoolean),
      sort: pick(true, icepack(PolicyKeys.sortEnabled), parseBoolean),
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
    maxSnapshotAgeMs: pick(
      PolicyDefaults.maxSnapshotAgeMs,
      withIceberg(PolicyKeys.maxSnapshotAgeMs, IcebergKeys.maxSnapshotAgeMs),
      nonNegative,
    ),
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
    minIntervalMs: {
      cleanup: pick(
        PolicyDefaults.minIntervalMs.cleanup,
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
    },
    // Read as Iceberg reads it (Java's Boolean.parseBoolean): set to anything but "true"
    // (any case), GC is off.
    gcEnabled: (tableProperties[IcebergKeys.gcEnabled] ?? 'true').toLowerCase() === 'true',
    sortColumns,
    zorderColumns,
  };

  for (const [source, props] of [
    ['catalog', catalogSettings],
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

/** `icepack.small-file-threshold = "abc" (table): expected …; using 20` — for logs and events. */
export function formatProblem(problem: PolicyProblem): string {
  return `bad policy value ${problem.key}=${JSON.stringify(problem.value)} (${problem.source}): ${problem.reason}`;
}
