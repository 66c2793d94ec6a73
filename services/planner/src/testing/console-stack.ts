// A planner HTTP server with the console mounted, on real Redis with private keys: the
// console's contract test and its browser test share it.
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import {
  createHttpServer,
  createLogger,
  deleteTopics,
  EnvelopeProducer,
  ensureTopics,
  KafkaClient,
  type HttpServer,
} from '@icepack/runtime';
import type { TaskEvent } from '@icepack/types';
import { Redis } from 'ioredis';
import { ConsoleStore } from '../adapters/console-store.ts';
import { LastSucceededStore } from '../adapters/last-succeeded.ts';
import { LedgerStore } from '../adapters/ledger-store.ts';
import { Planner } from '../adapters/planner.ts';
import { QuotaUseReader } from '../adapters/quota-use-reader.ts';
import { TableStateStore } from '../adapters/state-store.ts';
import { InMemoryTaskEventSink, KafkaTaskEventSink } from '../adapters/task-event-sink.ts';
import { TaskQueue } from '../adapters/task-queue.ts';
import { mountConsole } from '../console/mount-console.ts';
import { TableSummaries } from '../console/table-summaries.ts';
import { DEFAULT_LEDGER_BOUNDS } from '../domain/ledger.ts';

export interface ConsoleStack {
  readonly url: string;
  readonly token: string;
  readonly redis: Redis;
  readonly planner: Planner;
  readonly queue: TaskQueue;
  readonly states: TableStateStore;
  readonly store: ConsoleStore;
  readonly ledger: LedgerStore;
  readonly lastSucceeded: LastSucceededStore;
  readonly events: InMemoryTaskEventSink;
  /** With `kafkaBrokers`: the test topic every task event is also published on, and its client. */
  readonly kafka?: { readonly client: KafkaClient; readonly topic: string };
  close(catalogs: readonly string[]): Promise<void>;
}

export async function startConsoleStack(
  redisUrl: string,
  options: { trustedUserHeader?: string; kafkaBrokers?: readonly string[] } = {},
): Promise<ConsoleStack> {
  const id = randomUUID().slice(0, 8);
  const token = `console-token-${randomUUID()}`;
  const logger = createLogger({
    service: 'console-test',
    level: 'warn',
    destination: new Writable({ write: (_c, _e, cb) => cb() }),
  });
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new TaskQueue({ connection: redis });
  const states = new TableStateStore({
    connection: redis,
    statesKey: `test:console-${id}:states`,
    catalogsKey: `test:console-${id}:catalogs`,
  });
  const store = new ConsoleStore({ connection: redis, prefix: `test:console-${id}` });
  const ledger = new LedgerStore({
    connection: redis,
    prefix: `test:console-${id}:ledger`,
    bounds: DEFAULT_LEDGER_BOUNDS,
  });
  const lastSucceeded = new LastSucceededStore({
    connection: redis,
    key: `test:console-${id}:last-succeeded`,
  });
  const events = new InMemoryTaskEventSink();
  let kafka: { client: KafkaClient; topic: string; producer: EnvelopeProducer } | undefined;
  if (options.kafkaBrokers !== undefined) {
    const client = new KafkaClient({
      brokers: [...options.kafkaBrokers],
      clientId: `console-${id}`,
      logger,
    });
    const topic = `test.console.${id}.task-events`;
    await ensureTopics(client, [{ name: topic, cleanupPolicy: 'delete', partitions: 1 }]);
    const producer = new EnvelopeProducer(client);
    await producer.connect();
    kafka = { client, topic, producer };
  }
  const onKafka = kafka && new KafkaTaskEventSink(kafka.producer, kafka.topic);
  // Kept in memory, and on Kafka when asked: the planner's events as it publishes them.
  const sink = {
    publish: async (event: TaskEvent) => {
      await onKafka?.publish(event);
      await events.publish(event);
    },
  };
  const planner = new Planner({ queue, states, events: sink, logger, pauses: store });
  const http: HttpServer = createHttpServer({ port: 0, host: '127.0.0.1', logger });
  await mountConsole(http, {
    planner,
    states,
    queue,
    store,
    // Every request reads the states afresh: the tests change them between requests.
    summaries: new TableSummaries({ states, lastSucceeded, maxAgeMs: 0 }),
    ledger,
    quotaUse: new QuotaUseReader({ connection: redis, logger }),
    events: sink,
    token,
    trustedUserHeader: options.trustedUserHeader,
    logger,
  });
  await http.listen();
  return {
    url: `http://127.0.0.1:${http.port}`,
    token,
    redis,
    planner,
    queue,
    states,
    store,
    ledger,
    lastSucceeded,
    events,
    ...(kafka === undefined ? {} : { kafka: { client: kafka.client, topic: kafka.topic } }),
    close: async (catalogs) => {
      await http.close();
      if (kafka !== undefined) {
        await kafka.producer.disconnect();
        await deleteTopics(kafka.client, [kafka.topic]);
        await kafka.client.close();
      }
      for (const c of catalogs) await queue.queue(c).obliterate({ force: true });
      await queue.close();
      await states.clear();
      await lastSucceeded.clear();
      await store.clear(catalogs);
      await redis.del(...catalogs.map((c) => `test:console-${id}:ledger:${c}`));
      await redis.quit();
    },
  };
}
