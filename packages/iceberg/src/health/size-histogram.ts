import type { SizeBucket } from '@icepack/types';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

/** Upper bounds (exclusive) of the file-size histogram; a last, unbounded bucket follows. */
export const SIZE_HISTOGRAM_BOUNDS: readonly number[] = [
  64 * KiB,
  1 * MiB,
  8 * MiB,
  32 * MiB,
  64 * MiB,
  128 * MiB,
  256 * MiB,
  512 * MiB,
  1 * GiB,
];

export function bucketIndex(sizeBytes: number): number {
  const bounds = SIZE_HISTOGRAM_BOUNDS;
  for (let i = 0; i < bounds.length; i++) if (sizeBytes < bounds[i]!) return i;
  return bounds.length;
}

export function toSizeBuckets(files: readonly number[], bytes: readonly number[]): SizeBucket[] {
  return files.map((n, i) => ({
    upperBoundBytes: SIZE_HISTOGRAM_BOUNDS[i] ?? null,
    files: n,
    bytes: bytes[i] ?? 0,
  }));
}
