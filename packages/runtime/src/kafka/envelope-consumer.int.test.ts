import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { createEnvelope, parseMessage, sampleTableState, serializeEnvelope } from '@icepack/types';
import type { DlqRecord, MessageEnvelope } from '@icepack/types';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { createLogger } from '../logger/create-logger.ts';
import { EnvelopeConsumer } from './envelope-consumer.ts';
import type { EnvelopeConsumerOptions, MessageContext } from './envelope-consumer.ts';
import { EnvelopeProducer } from './envelope-producer.ts';
import { deleteTopics, ensureTopics } from './ensure-topics.ts';
import { UnrecoverableMessageError } from './handler-errors.ts';
import { KafkaClient } from './kafka-client.ts';

const infra = inject('infra');
const logger = createLogger({
  service: 'kafka-int-test',
  level: 'warn',
  destination: new Writable({ write: (_c, _e, cb) => cb() }),
});

const scan = (table: string) => ({
  table: { catalog: 'cat', namespace: ['db'], name: table },
  reason: 'manual' as const,
  requestedAt: new Date().toISOString(),
});

/** Everything a test created, removed afterwards so tests never see each other's data. */
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
  cleanup.length = 0;
});

async function setup(suffix = randomUUID().slice(0, 8)) {
  const client = new KafkaClient({
    brokers: infra.kafkaBrokers,
    clientId: `rt-test-${suffix}`,
    logger,
  });
  const topic = `test.rt.${suffix}`;
  const dlqTopic = `test.rt.${suffix}.dlq`;
  const groupId = `test-rt-${suffix}`;
  await ensureTopics(client, [
    { name: topic, cleanupPolicy: 'delete', partitions: 1 },
    { name: dlqTopic, cleanupPolicy: 'delete', partitions: 1 },
  ]);
  const producer = new EnvelopeProducer(client);
  await producer.connect();
  cleanup.push(async () => {
    await producer.disconnect();
    await deleteTopics(client, [topic, dlqTopic]);
    const admin = client.kafka.admin();
    await admin.connect();
    await admin.deleteGroups([groupId, `${groupId}-dlq-reader`]).catch(() => undefined);
    await admin.disconnect();
    await client.close();
  });
  const consumer = (
    options: Partial<EnvelopeConsumerOptions> & Pick<EnvelopeConsumerOptions, 'handlers'>,
  ) => {
    const c = new EnvelopeConsumer(client, {
      groupId,
      topics: [topic],
      producer,
      dlqTopic,
      ...options,
    });
    cleanup.push(() => c.stop());
    return c;
  };
  return { client, topic, dlqTopic, groupId, producer, consumer };
}

async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Reads the DLQ topic from the beginning with a plain kafkajs consumer. */
async function readDlq(client: KafkaClient, dlqTopic: string, groupId: string, count: number) {
  const records: DlqRecord[] = [];
  const reader = client.kafka.consumer({ groupId: `${groupId}-dlq-reader` });
  await reader.connect();
  await reader.subscribe({ topic: dlqTopic, fromBeginning: true });
  await reader.run({
    eachMessage: ({ message }) => {
      const envelope = parseMessage(message.value ?? '', ['MessageDeadLettered']);
      records.push(envelope.payload as DlqRecord);
      return Promise.resolve();
    },
  });
  await waitFor(`${count} DLQ records`, () => records.length >= count);
  await reader.disconnect();
  return records;
}

async function committedOffset(client: KafkaClient, groupId: string, topic: string) {
  const admin = client.kafka.admin();
  await admin.connect();
  try {
    const [entry] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return entry?.partitions[0]?.offset;
  } finally {
    await admin.disconnect();
  }
}

describe('EnvelopeProducer → EnvelopeConsumer on Kafka 4', () => {
  it('delivers a published message with its trace context (same trace id)', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({
      spanProcessors: [new SimpleSpanProcessor({ exporter })],
    });
    const tracer = provider.getTracer('test');
    const { client, topic, producer: plain, consumer } = await setup();
    const producer = new EnvelopeProducer(client, { tracer });
    await producer.connect();
    cleanup.push(() => producer.disconnect());

    const seen: { envelope: MessageEnvelope<'ScanTable'>; ctx: MessageContext }[] = [];
    await consumer({
      tracer,
      handlers: { ScanTable: (envelope, ctx) => void seen.push({ envelope, ctx }) },
    }).start();
    void plain;

    const sent = await producer.publish(topic, 'ScanTable', 'cat/db/orders', scan('orders'));
    await waitFor('the message', () => seen.length === 1);

    expect(seen[0]?.envelope).toEqual(sent);
    expect(seen[0]?.ctx.key).toBe('cat/db/orders');
    const spans = exporter.getFinishedSpans();
    const send = spans.find((span) => span.name === `send ${topic}`);
    await waitFor('the consumer span', () =>
      exporter.getFinishedSpans().some((s) => s.name === `process ${topic}`),
    );
    const process = exporter.getFinishedSpans().find((span) => span.name === `process ${topic}`);
    expect(send).toBeDefined();
    expect(process?.spanContext().traceId).toBe(send?.spanContext().traceId);
    expect(process?.parentSpanContext?.spanId).toBe(send?.spanContext().spanId);
    expect(String(seen[0]?.ctx.headers.traceparent)).toContain(send?.spanContext().traceId);
  });

  it('publishes made while a request is in flight share produce requests, in the order made', async () => {
    const { client, topic, consumer } = await setup();
    // Counts the produce requests of the producer built next (kafkajs request events).
    let produceRequests = 0;
    const build = client.kafka.producer.bind(client.kafka);
    const spy = vi.spyOn(client.kafka, 'producer').mockImplementationOnce((config) => {
      const made = build(config);
      made.on(made.events.REQUEST, (event) => {
        if (event.payload.apiName === 'Produce') produceRequests++;
      });
      return made;
    });
    const producer = new EnvelopeProducer(client);
    spy.mockRestore();
    await producer.connect();
    cleanup.push(() => producer.disconnect());

    const names = Array.from({ length: 200 }, (_, i) => `t${String(i).padStart(3, '0')}`);
    const seen: string[] = [];
    await consumer({
      handlers: { ScanTable: (envelope) => void seen.push(envelope.payload.table.name) },
    }).start();
    // Two keys on the topic's one partition: the order of the calls is the order on the log.
    await Promise.all(
      names.map((name, i) => producer.publish(topic, 'ScanTable', `cat/db/k${i % 2}`, scan(name))),
    );
    await waitFor('every message', () => seen.length >= names.length);

    expect(seen).toEqual(names);
    // One request per message without batching; 100 messages per request at most.
    expect(produceRequests).toBeGreaterThanOrEqual(2);
    expect(produceRequests).toBeLessThan(10);
  });

  it('sends malformed messages to the DLQ naming the field, and goes on with the next', async () => {
    const { client, topic, dlqTopic, groupId, producer, consumer } = await setup();
    const handled: string[] = [];
    await consumer({
      handlers: { ScanTable: (envelope) => void handled.push(envelope.payload.table.name) },
    }).start();

    await producer.sendRaw(topic, 'k-bad-json', '{"type": "ScanTable", oops');
    const bad = {
      type: 'ScanTable',
      version: 1,
      id: randomUUID(),
      occurredAt: new Date().toISOString(),
      key: 'k',
      payload: { ...scan('x'), reason: 'because' },
    };
    await producer.sendRaw(topic, 'k-bad-schema', JSON.stringify(bad));
    await producer.publish(topic, 'CommitObserved', 'k-no-handler', { table: scan('y').table });
    await producer.publish(topic, 'ScanTable', 'cat/db/good', scan('good'));

    await waitFor('the good message', () => handled.includes('good'));
    expect(handled).toEqual(['good']);

    const records = await readDlq(client, dlqTopic, groupId, 3);
    const byKey: Record<string, DlqRecord> = {};
    for (const record of records) byKey[record.key ?? ''] = record;
    expect(byKey['k-bad-json']?.reason).toMatch(/not JSON/);
    expect(Buffer.from(byKey['k-bad-json']?.value ?? '', 'base64').toString()).toBe(
      '{"type": "ScanTable", oops',
    );
    expect(byKey['k-bad-schema']?.reason).toMatch(/payload\.reason/);
    expect(byKey['k-no-handler']?.reason).toMatch(/type: unknown message type "CommitObserved"/);
    expect(byKey['k-bad-schema']).toMatchObject({
      sourceTopic: topic,
      partition: 0,
      offset: '1',
      consumerGroup: groupId,
    });
    // Everything up to and past the good message is committed: nothing is re-read.
    await waitFor(
      'the commit',
      async () => (await committedOffset(client, groupId, topic)) === '4',
    );
  });

  it('redelivers a message whose handler threw, and never commits past it', async () => {
    const { client, topic, groupId, producer, consumer } = await setup();
    const attempts: number[] = [];
    await consumer({
      retry: { initialMs: 50, maxMs: 200 },
      handlers: {
        ScanTable: (_envelope, ctx) => {
          attempts.push(ctx.attempt);
          if (ctx.attempt < 3) throw new Error('redis unavailable');
        },
      },
    }).start();
    await producer.publish(topic, 'ScanTable', 'cat/db/t', scan('t'));
    await waitFor('three attempts', () => attempts.length === 3);
    expect(attempts).toEqual([1, 2, 3]);
    await waitFor(
      'the commit',
      async () => (await committedOffset(client, groupId, topic)) === '1',
    );
  });

  it('hands an uncommitted message to the next consumer of the group after a restart', async () => {
    const { client, topic, groupId, producer, consumer } = await setup();
    const first: string[] = [];
    const a = consumer({
      retry: { initialMs: 600_000 },
      handlers: {
        ScanTable: (envelope) => {
          first.push(envelope.payload.table.name);
          if (envelope.payload.table.name === 'poison') throw new Error('always fails here');
        },
      },
    });
    await a.start();
    await producer.publish(topic, 'ScanTable', 'cat/db/ok', scan('ok'));
    await producer.publish(topic, 'ScanTable', 'cat/db/poison', scan('poison'));
    await producer.publish(topic, 'ScanTable', 'cat/db/after', scan('after'));
    await waitFor('the failing message', () => first.includes('poison'));
    await a.stop();
    expect(first).toEqual(['ok', 'poison']);
    expect(await committedOffset(client, groupId, topic)).toBe('1');

    const second: string[] = [];
    await consumer({
      handlers: { ScanTable: (envelope) => void second.push(envelope.payload.table.name) },
    }).start();
    await waitFor('the redelivery', () => second.length === 2);
    expect(second).toEqual(['poison', 'after']);
  });

  it('dead-letters an unrecoverable handler failure and after maxAttempts', async () => {
    const { client, topic, dlqTopic, groupId, producer, consumer } = await setup();
    const handled: string[] = [];
    await consumer({
      maxAttempts: 2,
      retry: { initialMs: 20, maxMs: 50 },
      handlers: {
        ScanTable: (envelope) => {
          const name = envelope.payload.table.name;
          if (name === 'gone')
            throw new UnrecoverableMessageError('table cat.db.gone does not exist');
          if (name === 'flaky') throw new Error('keeps timing out');
          handled.push(name);
        },
      },
    }).start();
    await producer.publish(topic, 'ScanTable', 'cat/db/gone', scan('gone'));
    await producer.publish(topic, 'ScanTable', 'cat/db/flaky', scan('flaky'));
    await producer.publish(topic, 'ScanTable', 'cat/db/fine', scan('fine'));
    await waitFor('the last message', () => handled.includes('fine'));
    const records = await readDlq(client, dlqTopic, groupId, 2);
    expect(records.map((r) => [r.key, r.reason])).toEqual([
      ['cat/db/gone', 'handler failed: table cat.db.gone does not exist'],
      ['cat/db/flaky', 'handler failed after 2 attempts: keeps timing out'],
    ]);
  });

  it('lets the handler in flight finish and commits it on stop()', async () => {
    const { client, topic, groupId, producer, consumer } = await setup();
    let entered = false;
    let finished = false;
    const c = consumer({
      handlers: {
        ScanTable: async () => {
          entered = true;
          await new Promise((resolve) => setTimeout(resolve, 500));
          finished = true;
        },
      },
    });
    await c.start();
    await producer.publish(topic, 'ScanTable', 'cat/db/slow', scan('slow'));
    await waitFor('the handler to start', () => entered);
    await c.stop();
    expect(finished).toBe(true);
    expect(await committedOffset(client, groupId, topic)).toBe('1');
  });

  it('with commits batched, stop() commits every handled message and the next member goes on from there', async () => {
    const { client, topic, groupId, producer, consumer } = await setup();
    const handled: number[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((ok) => (release = ok));
    let waiting = false;
    const first = consumer({
      // Longer than the test: only the batch end, a retry or stop() commit.
      commitIntervalMs: 600_000,
      handlers: {
        ScanTable: async (envelope) => {
          const n = Number(envelope.payload.table.name.slice(1));
          if (n === 10) {
            waiting = true;
            await gate;
          }
          handled.push(n);
        },
      },
    });
    await first.start();
    for (let n = 0; n < 20; n += 1) {
      await producer.publish(topic, 'ScanTable', `cat/db/t${String(n)}`, scan(`t${String(n)}`));
    }
    await waitFor('message 10 in its handler', () => waiting);
    const stopped = first.stop();
    release();
    await stopped;
    expect(handled).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(await committedOffset(client, groupId, topic)).toBe('11');

    const rest: number[] = [];
    await consumer({
      handlers: {
        ScanTable: (envelope) => void rest.push(Number(envelope.payload.table.name.slice(1))),
      },
    }).start();
    await waitFor('the rest', () => rest.length === 9);
    expect(rest).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19]);
  });

  describe('with messagesInFlight (ADR 0052)', () => {
    /** Publishes `names` (key `cat/db/<first letter>`) on the topic's one partition, in order. */
    const publishAll = async (producer: EnvelopeProducer, topic: string, names: string[]) => {
      for (const name of names)
        await producer.publish(topic, 'ScanTable', `cat/db/${name[0]!}`, scan(name));
    };

    it('handles other keys past a message in flight, a key in order, and commits nothing past it', async () => {
      const { client, topic, groupId, producer, consumer } = await setup();
      const log: string[] = [];
      let release: () => void = () => undefined;
      const gate = new Promise<void>((ok) => (release = ok));
      // All written first: the consumer fetches them in one batch (in-flight handling is
      // within a fetched batch).
      await publishAll(producer, topic, ['a0', 'a1', 'b0', 'c0', 'b1']);
      await consumer({
        messagesInFlight: 4,
        commitIntervalMs: 0,
        handlers: {
          ScanTable: async (envelope) => {
            const name = envelope.payload.table.name;
            log.push(`start ${name}`);
            if (name === 'a0') await gate;
            log.push(`end ${name}`);
          },
        },
      }).start();
      cleanup.push(() => Promise.resolve(release()));
      // a0 is in its handler; the other keys' messages behind it are handled meanwhile.
      await waitFor('b0, c0 and b1', () =>
        ['b0', 'c0', 'b1'].every((n) => log.includes(`end ${n}`)),
      );
      expect(log).not.toContain('start a1'); // a's next waits for a0
      expect(log.indexOf('start b1')).toBeGreaterThan(log.indexOf('end b0'));
      // Offset 0 is not handled: nothing after it is committed.
      expect(await committedOffset(client, groupId, topic)).toBe('-1');
      release();
      await waitFor('a1', () => log.includes('end a1'));
      expect(log.indexOf('start a1')).toBeGreaterThan(log.indexOf('end a0'));
      await waitFor(
        'the commit',
        async () => (await committedOffset(client, groupId, topic)) === '5',
      );
    });

    it('works within a fetched batch: with maxBytesPerPartition under one message, one message at a time', async () => {
      const { topic, producer, consumer } = await setup();
      // Five keys, each message its own record batch (published one after another).
      await publishAll(producer, topic, ['a0', 'b0', 'c0', 'd0', 'e0']);
      let running = 0;
      let most = 0;
      const ended: string[] = [];
      await consumer({
        messagesInFlight: 4,
        // Under one record batch: the broker still answers with the first one (KIP-74), so
        // each fetch brings one message, and in-flight handling has nothing to overlap.
        maxBytesPerPartition: 1,
        handlers: {
          ScanTable: async (envelope) => {
            most = Math.max(most, ++running);
            // Long enough for the other messages of a batch to start, were there any.
            await new Promise((resolve) => setTimeout(resolve, 200));
            running--;
            ended.push(envelope.payload.table.name);
          },
        },
      }).start();
      await waitFor('all five', () => ended.length === 5);
      expect(ended).toEqual(['a0', 'b0', 'c0', 'd0', 'e0']);
      expect(most).toBe(1);
    });

    it("hands every concurrently consumed partition's batch from one fetch, at the planner's 8 MiB a partition", async () => {
      const { client, consumer } = await setup();
      // Three partitions with more than 8 MiB each waiting. kafkajs's 10 MiB cap on a whole
      // fetch held one partition's 8 MiB and part of a second's: the third partition waited
      // for the next fetch, which waits for these batches' handlers.
      const topic = `test.rt.${randomUUID().slice(0, 8)}.wide`;
      await ensureTopics(client, [{ name: topic, cleanupPolicy: 'delete', partitions: 3 }]);
      cleanup.push(() => deleteTopics(client, [topic]));
      const raw = client.kafka.producer();
      await raw.connect();
      cleanup.push(() => raw.disconnect());
      // ~0.5 MB a message, each sent alone (a record batch must stay under the broker's 1 MB).
      const value = (i: number) =>
        serializeEnvelope(
          createEnvelope(
            'TableScanned',
            `cat/db/t${i}`,
            sampleTableState({ properties: { comment: 'x'.repeat(500_000) } }),
          ),
        );
      for (let i = 0; i < 3 * 17; i++)
        await raw.send({ topic, messages: [{ partition: i % 3, key: `t${i}`, value: value(i) }] });
      // Each handler waits until a handler of every partition has started: only a fetch that
      // hands out all three partitions' batches gets past it.
      const started = new Set<number>();
      let open: () => void = () => undefined;
      const allStarted = new Promise<void>((ok) => (open = ok));
      let handled = 0;
      const c = consumer({
        topics: [topic],
        partitionsConsumedConcurrently: 3,
        messagesInFlight: 4,
        maxBytesPerPartition: 8 * 1024 * 1024,
        handlers: {
          TableScanned: async (_envelope, ctx) => {
            started.add(ctx.partition);
            if (started.size === 3) open();
            await allStarted;
            handled++;
          },
        },
      });
      // Cleanups run last first: handlers released before the consumer's stop waits for them.
      cleanup.push(() => Promise.resolve(open()));
      await c.start();
      await waitFor('a handler of each of the three partitions at once', () => started.size === 3);
      await waitFor('every message', () => handled === 3 * 17);
    });

    it('after a failure, fetches again from the first unhandled message and handles only what was not', async () => {
      const { client, topic, groupId, producer, consumer } = await setup();
      const handled: string[] = [];
      const attempts: number[] = [];
      await publishAll(producer, topic, ['a0', 'b0', 'c0', 'a1', 'd0']);
      await consumer({
        messagesInFlight: 4,
        retry: { initialMs: 50, maxMs: 200 },
        handlers: {
          ScanTable: async (envelope, ctx) => {
            const name = envelope.payload.table.name;
            if (name === 'a0') {
              attempts.push(ctx.attempt);
              if (ctx.attempt === 1) {
                // Fails once the messages after it, of other keys, are handled.
                await waitFor('b0 and c0', () => handled.includes('b0') && handled.includes('c0'));
                throw new Error('redis unavailable');
              }
            }
            handled.push(name);
          },
        },
      }).start();
      await waitFor(
        'the commit',
        async () => (await committedOffset(client, groupId, topic)) === '5',
      );
      expect(attempts).toEqual([1, 2]);
      // Each handled once; a1 only after a0 succeeded.
      expect([...handled].sort()).toEqual(['a0', 'a1', 'b0', 'c0', 'd0']);
      expect(handled.indexOf('a1')).toBeGreaterThan(handled.indexOf('a0'));
    });

    it('dead-letters a bad message without holding up the ones after it', async () => {
      const { client, topic, dlqTopic, groupId, producer, consumer } = await setup();
      const handled: string[] = [];
      await producer.sendRaw(topic, 'cat/db/a', '{"type": "ScanTable", oops');
      await publishAll(producer, topic, ['a1', 'b0']);
      await consumer({
        messagesInFlight: 4,
        handlers: { ScanTable: (envelope) => void handled.push(envelope.payload.table.name) },
      }).start();
      await waitFor(
        'the commit',
        async () => (await committedOffset(client, groupId, topic)) === '3',
      );
      expect(handled.sort()).toEqual(['a1', 'b0']);
      expect((await readDlq(client, dlqTopic, groupId, 1)).map((r) => r.key)).toEqual(['cat/db/a']);
    });

    it('on stop(), commits only up to the first unhandled message; the next member gets the rest', async () => {
      const { client, topic, groupId, producer, consumer } = await setup();
      const first: string[] = [];
      let release: () => void = () => undefined;
      const gate = new Promise<void>((ok) => (release = ok));
      let waiting = false;
      const a = consumer({
        messagesInFlight: 4,
        commitIntervalMs: 600_000,
        handlers: {
          ScanTable: async (envelope) => {
            const name = envelope.payload.table.name;
            if (name === 'a0') {
              waiting = true;
              await gate;
            }
            first.push(name);
          },
        },
      });
      await publishAll(producer, topic, ['a0', 'b0', 'c0', 'a1']);
      await a.start();
      cleanup.push(() => Promise.resolve(release()));
      await waitFor('b0 and c0 past a0', () => waiting && first.length === 2);
      const stopped = a.stop();
      release();
      await stopped;
      // a1 waited for a0 and did not start once the consumer was stopping.
      expect(first.sort()).toEqual(['a0', 'b0', 'c0']);
      expect(await committedOffset(client, groupId, topic)).toBe('3');
      const second: string[] = [];
      await consumer({
        handlers: { ScanTable: (envelope) => void second.push(envelope.payload.table.name) },
      }).start();
      await waitFor('the rest', () => second.length === 1);
      expect(second).toEqual(['a1']);
    });
  });

  it('passes tombstones to onTombstone and creates compacted topics', async () => {
    const { client, topic, producer, consumer } = await setup();
    const compacted = `${topic}.state`;
    await ensureTopics(client, [{ name: compacted, cleanupPolicy: 'compact', partitions: 1 }]);
    cleanup.push(() => deleteTopics(client, [compacted]));
    const admin = client.kafka.admin();
    await admin.connect();
    const described = await admin.describeConfigs({
      resources: [{ type: 2, name: compacted, configNames: ['cleanup.policy'] }],
      includeSynonyms: false,
    });
    await admin.disconnect();
    expect(described.resources[0]?.configEntries[0]?.configValue).toBe('compact');

    const tombstones: (string | null)[] = [];
    await consumer({
      handlers: { ScanTable: () => {} },
      onTombstone: (key) => void tombstones.push(key),
    }).start();
    await producer.tombstone(topic, 'cat/db/dropped');
    await waitFor('the tombstone', () => tombstones.length === 1);
    expect(tombstones).toEqual(['cat/db/dropped']);
  });

  it('reports health: ready with a broker, not ready without one', async () => {
    const { client } = await setup();
    expect((await client.health()).ok).toBe(true);
    const down = new KafkaClient({
      brokers: ['127.0.0.1:1'],
      clientId: 'down',
      logger,
      connectionTimeoutMs: 200,
    });
    const health = await down.health();
    expect(health.ok).toBe(false);
    expect(health.detail).toMatch(/brokers unreachable/);
    await down.close();
  });
});
