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
