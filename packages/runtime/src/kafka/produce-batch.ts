/**
 * How many queued publishes one produce request carries. The producer keeps one request in
 * flight (retries keep order); publishes made meanwhile wait, and go together in the next
 * request instead of one request each: one encode, one socket write and one acknowledgement
 * for many. A request stays well under the broker's default `message.max.bytes` (1 MiB per
 * partition batch) even when every message of it lands on one partition.
 */
export interface ProduceBatchLimits {
  readonly maxMessages: number;
  /** Sum of the queued values' and keys' bytes. */
  readonly maxBytes: number;
}

export const DEFAULT_PRODUCE_BATCH_LIMITS: ProduceBatchLimits = {
  maxMessages: 100,
  maxBytes: 512 * 1024,
};

/**
 * The number of queued sends, oldest first, that go in the next request: as many as fit the
 * limits, and always at least one (a message larger than `maxBytes` goes alone, as it would
 * have without batching; the broker judges it). 0 only for an empty queue.
 */
export function nextBatchSize(
  sizes: readonly number[],
  limits: ProduceBatchLimits = DEFAULT_PRODUCE_BATCH_LIMITS,
): number {
  let bytes = 0;
  let count = 0;
  for (const size of sizes) {
    if (count >= limits.maxMessages) break;
    if (count > 0 && bytes + size > limits.maxBytes) break;
    bytes += size;
    count++;
  }
  return count;
}
