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

// The same patch: murmur2 in 32-bit arithmetic (upstream: 64-bit Long objects). The partition
// of every keyed message depends on it, so it must stay Java's hash bit for bit.
const murmur2 = createRequire(import.meta.url)(
  'kafkajs/src/producer/partitioners/default/murmur2',
) as (key: string | Buffer) => number;

/** Java's `Utils.murmur2`, step by step in BigInt (wrapping to 32 bits as Java's int does). */
function javaMurmur2(data: Buffer): number {
  const int = (x: bigint) => BigInt.asIntN(32, x);
  const ushr = (x: bigint, n: bigint) => BigInt.asUintN(32, x) >> n;
  const m = 0x5bd1e995n;
  let h = int(0x9747b28cn ^ BigInt(data.length));
  const length4 = Math.floor(data.length / 4);
  for (let i = 0; i < length4; i++) {
    let k = int(BigInt(data.readInt32LE(i * 4)));
    k = int(k * m);
    k = int(k ^ ushr(k, 24n));
    k = int(k * m);
    h = int(h * m);
    h = int(h ^ k);
  }
  const tail = data.length & ~3;
  const left = data.length % 4;
  if (left >= 3) h = int(h ^ (BigInt(data[tail + 2]!) << 16n));
  if (left >= 2) h = int(h ^ (BigInt(data[tail + 1]!) << 8n));
  if (left >= 1) h = int((h ^ BigInt(data[tail]!)) * m);
  h = int(h ^ ushr(h, 13n));
  h = int(h * m);
  h = int(h ^ ushr(h, 15n));
  return Number(h);
}

describe('kafkajs murmur2 (patched)', () => {
  it("gives Java's hashes (Kafka's own test vectors)", () => {
    expect(murmur2('21')).toBe(-973932308);
    expect(murmur2('foobar')).toBe(-790332482);
    expect(murmur2('a-little-bit-long-string')).toBe(-985981536);
    expect(murmur2('a-little-bit-longer-string')).toBe(-1486304829);
    expect(murmur2('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8')).toBe(-58897971);
    expect(murmur2('abc')).toBe(479470107);
  });

  it('agrees with Java arithmetic on every length and byte, table keys included', () => {
    const keys = ['', 'prod/sales.eu/orders', 'ü€𝄞', 'cat/db.ns0/t0', 'foobar', '21'].map((k) =>
      Buffer.from(k),
    );
    for (let n = 0; n < 64; n++)
      keys.push(Buffer.from(Array.from({ length: n }, (_, i) => (i * 97 + n * 31) & 0xff)));
    for (const key of keys) expect(murmur2(key), key.toString('hex')).toBe(javaMurmur2(key));
    expect(murmur2('prod/sales.eu/orders')).toBe(murmur2(Buffer.from('prod/sales.eu/orders')));
  });
});
