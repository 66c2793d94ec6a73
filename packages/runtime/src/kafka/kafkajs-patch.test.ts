// patches/kafkajs@2.2.4.patch (kafkajs#1751, #1704): an idle connection's request queue must not
// poll. Upstream 2.2.4 schedules a pending-requests check with a negative delay whenever the
// queue is empty (Node runs it after 1 ms and warns TimeoutNegativeWarning), and each check
// schedules the next: every broker connection of every service spun a 1 ms timer loop.
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';

interface RequestQueueLike {
  pending: unknown[];
  throttledUntil: number;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

// kafkajs is CommonJS without an exports map: its request queue is reachable by path.
const RequestQueue = createRequire(import.meta.url)('kafkajs/src/network/requestQueue') as new (
  options: object,
) => RequestQueueLike;

function queue(): RequestQueueLike {
  const logger = { debug() {}, info() {}, warn() {}, error() {} };
  return new RequestQueue({
    maxInFlightRequests: null,
    requestTimeout: 30_000,
    enforceRequestTimeout: true,
    clientId: 'test',
    broker: 'localhost:9092',
    logger,
  });
}

afterEach(() => {
  vi.useRealTimers();
});

describe('kafkajs request queue (patched)', () => {
  it('does not poll while nothing is pending and nothing throttles it', () => {
    vi.useFakeTimers();
    const q = queue();
    const check = vi.spyOn(q, 'checkPendingRequests');
    q.checkPendingRequests(); // what a fulfilled request does
    vi.advanceTimersByTime(1_000);
    expect(check).toHaveBeenCalledTimes(1); // upstream: ~1,000 (one per millisecond)
    expect(vi.getTimerCount()).toBe(0);
  });

  it('still checks again when a throttle ends', () => {
    vi.useFakeTimers();
    const q = queue();
    q.throttledUntil = Date.now() + 500;
    const check = vi.spyOn(q, 'checkPendingRequests');
    q.scheduleCheckPendingRequests();
    vi.advanceTimersByTime(499);
    expect(check).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(check).toHaveBeenCalledTimes(1);
  });
});

// The same patch: a send's messages grouped by partition without copying a partition's array
// for every message (upstream's `[...current, message]`, quadratic; a performance change, so
// this shows the grouping is still upstream's, not that it is faster).
const groupMessagesPerPartition = createRequire(import.meta.url)(
  'kafkajs/src/producer/groupMessagesPerPartition',
) as (options: {
  topic: string;
  partitionMetadata: readonly object[];
  messages: readonly { key: string }[];
  partitioner: (o: { message: { key: string } }) => number;
}) => Record<number, { key: string }[]>;

describe('kafkajs producer grouping (patched)', () => {
  it("groups a send's messages by partition, each partition's in the order sent", () => {
    const messages = Array.from({ length: 10 }, (_, i) => ({ key: `k${i}` }));
    const grouped = groupMessagesPerPartition({
      topic: 't',
      partitionMetadata: [{}, {}, {}],
      messages,
      partitioner: ({ message }) => Number(message.key.slice(1)) % 3,
    });
    expect(grouped).toEqual({
      0: [messages[0], messages[3], messages[6], messages[9]],
      1: [messages[1], messages[4], messages[7]],
      2: [messages[2], messages[5], messages[8]],
    });
    expect(
      groupMessagesPerPartition({
        topic: 't',
        partitionMetadata: [],
        messages,
        partitioner: () => 0,
      }),
    ).toEqual({});
  });
});
