/** Table property keys health reads, beside their defaults (Iceberg's own where it has one). */
export const TableProperties = {
  targetFileSizeBytes: 'write.target-file-size-bytes',
  minFileSizeBytes: 'icepack.min-file-size-bytes',
} as const;

/** Iceberg's default `write.target-file-size-bytes`: 512 MiB. */
export const DEFAULT_TARGET_FILE_SIZE_BYTES = 512 * 1024 * 1024;
/** A file below 75 % of the target size is small (maintenance-rules.md). */
export const MIN_FILE_SIZE_RATIO = 0.75;

/** A property whose value could not be used; the default applied instead. */
export interface PropertyProblem {
  readonly key: string;
  readonly value: string;
  readonly reason: string;
}

function positiveInteger(
  props: Readonly<Record<string, string>>,
  key: string,
  onProblem: (problem: PropertyProblem) => void,
): number | undefined {
  const value = props[key];
  if (value === undefined) return undefined;
  const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) {
    onProblem({ key, value, reason: 'expected a positive integer (bytes)' });
    return undefined;
  }
  return n;
}

/**
 * The small-file threshold: `icepack.min-file-size-bytes`, else the caller's policy value,
 * else 75 % of `write.target-file-size-bytes` (512 MiB when unset).
 */
export function minFileSizeBytes(
  props: Readonly<Record<string, string>>,
  policyMinFileSizeBytes: number | undefined,
  onProblem: (problem: PropertyProblem) => void = () => {},
): number {
  const own = positiveInteger(props, TableProperties.minFileSizeBytes, onProblem);
  if (own !== undefined) return own;
  if (policyMinFileSizeBytes !== undefined) return policyMinFileSizeBytes;
  const target =
    positiveInteger(props, TableProperties.targetFileSizeBytes, onProblem) ??
    DEFAULT_TARGET_FILE_SIZE_BYTES;
  return Math.floor(target * MIN_FILE_SIZE_RATIO);
}
