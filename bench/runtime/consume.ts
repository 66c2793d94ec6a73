// Messages handled per second by one EnvelopeConsumer (one partition, a handler that does
// nothing), and how its offset commits weigh on that. Run (Kafka up:
// bash deploy/local/infra.sh up kafka):
//   node bench/runtime/consume.ts [messages] [commit intervals in ms, comma-separated]
// Each interval gets its own topic and group; the messages are written beforehand in
// batches, so the figure is the consumer's alone (fetch, parse, span, handler, commit).
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import {
  createLogger,
  deleteTopics,
  EnvelopeConsumer,
  EnvelopeProducer,
  ensureTopics,
  KafkaClient,
} from '@icepack/runtime';
import { createEnvelope, serializeEnvelope } from '@icepack/types';
import { machine } from '../iceberg/machine.ts';

const total = Number(process.argv[2] ?? 20_000);
const intervals = (process.argv[3] ?? '0,1000').split(',').map(Number);
const brokers = [`127.0.0.1:${process.env.ICEPACK_KAFKA_PORT ?? '19092'}`];
const logger = createLogger({
  service: 'bench',
  level: 'warn',
  destination: new Writable({ write: (_c, _e, cb) => cb() }),
});

const client = new KafkaClient({ brokers, clientId: 'bench-consume', logger });
const producer = new EnvelopeProducer(client);
await producer.connect();
const raw = client.kafka.producer();
await raw.connect();

const rows: string[] = [];
for (const commitIntervalMs of intervals) {
  const suffix = randomUUID().slice(0, 8);
  const topic = `bench.consume.${suffix}`;
  await ensureTopics(client, [{ name: topic, cleanupPolicy: 'delete', partitions: 1 }]);
  for (let i = 0; i < total; i += 1_000) {
    const messages = Array.from({ length: Math.min(1_000, total - i) }, (_, j) => {
      const key = `cat/db/t${String(i + j)}`;
      const envelope = createEnvelope('ScanTable', key, {
        table: { catalog: 'cat', namespace: ['db'], name: `t${String(i + j)}` },
        reason: 'manual',
        requestedAt: new Date().toISOString(),
      });
      return { key, value: serializeEnvelope(envelope) };
    });
    await raw.sendBatch({ topicMessages: [{ topic, messages }] });
  }

  let handled = 0;
  let first = 0;
  let finish: () => void = () => undefined;
  const done = new Promise<void>((ok) => (finish = ok));
  const consumer = new EnvelopeConsumer(client, {
    groupId: `bench-consume-${suffix}`,
    topics: [topic],
    producer,
    commitIntervalMs,
    handlers: {
      ScanTable: () => {
        if (handled === 0) first = performance.now();
        handled += 1;
        if (handled === total) finish();
      },
    },
  });
  await consumer.start();
  await done;
  const seconds = (performance.now() - first) / 1000;
  await consumer.stop();
  await deleteTopics(client, [topic]);
  rows.push(
    `| ${String(commitIntervalMs)} | ${String(total)} | ${seconds.toFixed(2)} s | ${Math.round(total / seconds).toLocaleString('en')} |`,
  );
}
await raw.disconnect();
await producer.disconnect();
await client.close();

console.log(
  [
    '# runtime: EnvelopeConsumer throughput (one partition, empty handler)',
    '',
    '```',
    machine(),
    '```',
    '',
    '| commit interval (ms; 0 = every message) | messages | first → last handled | messages/s |',
    '|---|---|---|---|',
    ...rows,
  ].join('\n'),
);
