/** Millicores → the shortest Kubernetes cpu quantity ("2", "1500m"). */
export function formatCpu(millis: number): string {
  return millis % 1000 === 0 ? String(millis / 1000) : `${millis}m`;
}

/** Bytes → a binary-suffixed quantity when exact ("32Gi", "512Mi"), else plain bytes. */
export function formatMemory(bytes: number): string {
  for (const [suffix, size] of [
    ['Ti', 2 ** 40],
    ['Gi', 2 ** 30],
    ['Mi', 2 ** 20],
    ['Ki', 2 ** 10],
  ] as const) {
    if (bytes !== 0 && bytes % size === 0) return `${bytes / size}${suffix}`;
  }
  return String(bytes);
}
