// CPU an idle Kafka client costs: a producer, an admin client and a consumer in a group on an
// idle topic, connected and left alone for a while — what every Icepack service holds between
// events. Run (Kafka up: bash deploy/local/infra.sh up kafka):
//   node bench/runtime/kafka-idle.ts SECONDS ROUNDS NAME=KAFKAJS_DIR [NAME=KAFKAJS_DIR …]
// Each round measures every kafkajs copy once, in turn, each in a child process of its own
// (process CPU from `process.cpuUsage()` over the idle window only). Used to measure the
// patch in patches/kafkajs@2.2.4.patch against the published package (get one with
// `npm pack kafkajs@2.2.4 && tar xf kafkajs-2.2.4.tgz`).
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { machine } from '../iceberg/machine.ts';

const brokers = [`127.0.0.1:${process.env.ICEPACK_KAFKA_PORT ?? '19092'}`];

interface KafkaLike {
  producer(): { connect(): Promise<void>; disconnect(): Promise<void> };
  admin(): {
    connect(): Promise<void>;
    disconnect(): Promise<void>;
    createTopics(o: { topics: { topic: string; numPartitions: number }[] }): Promise<boolean>;
  };
  consumer(o: { groupId: string }): {
    connect(): Promise<void>;
    disconnect(): Promise<void>;
    subscribe(o: { topic: string }): Promise<void>;
    run(o: { eachMessage: () => Promise<void> }): Promise<void>;
  };
}

async function child(dir: string, seconds: number): Promise<void> {
  const { Kafka, logLevel } = createRequire(import.meta.url)(resolve(dir)) as {
    Kafka: new (o: object) => KafkaLike;
    logLevel: { NOTHING: number };
  };
  const kafka = new Kafka({ brokers, clientId: 'bench-idle', logLevel: logLevel.NOTHING });
  const topic = `bench.idle.${randomUUID().slice(0, 8)}`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
  const producer = kafka.producer();
  await producer.connect();
  const consumer = kafka.consumer({ groupId: topic });
  await consumer.connect();
  await consumer.subscribe({ topic });
  await consumer.run({ eachMessage: async () => {} });
  // Let the group settle before the window opens.
  await new Promise((r) => setTimeout(r, 5_000));
  const start = process.cpuUsage();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const used = process.cpuUsage(start);
  console.log(JSON.stringify({ cpuMs: (used.user + used.system) / 1000 }));
  await consumer.disconnect();
  await producer.disconnect();
  await admin.disconnect();
}

if (process.argv[2] === '--child') {
  await child(process.argv[3]!, Number(process.argv[4]));
  process.exit(0);
}

const seconds = Number(process.argv[2] ?? 30);
const rounds = Number(process.argv[3] ?? 3);
const copies = process.argv.slice(4).map((arg) => {
  const at = arg.indexOf('=');
  if (at < 1) throw new Error(`expected NAME=DIR, got ${arg}`);
  return { name: arg.slice(0, at), dir: arg.slice(at + 1) };
});
if (copies.length === 0) throw new Error('usage: kafka-idle.ts SECONDS ROUNDS NAME=DIR …');

console.log(machine());
console.log(`load before: ${execFileSync('cat', ['/proc/loadavg']).toString().trim()}`);
console.log(`| round | ${copies.map((c) => c.name).join(' | ')} |`);
console.log(`|---|${copies.map(() => '---').join('|')}|`);
for (let round = 1; round <= rounds; round += 1) {
  const cells: string[] = [];
  for (const { dir } of copies) {
    const out = spawnSync(
      process.execPath,
      [import.meta.filename, '--child', dir, String(seconds)],
      { encoding: 'utf8' },
    );
    const line = out.stdout.trim().split('\n').at(-1) ?? '';
    if (out.status !== 0) throw new Error(`child failed: ${out.stderr}`);
    const { cpuMs } = JSON.parse(line) as { cpuMs: number };
    cells.push(
      `${cpuMs.toFixed(0)} ms CPU in ${String(seconds)} s (${((cpuMs / (seconds * 1000)) * 100).toFixed(2)} % of a core)`,
    );
  }
  console.log(`| ${String(round)} | ${cells.join(' | ')} |`);
}
console.log(`load after: ${execFileSync('cat', ['/proc/loadavg']).toString().trim()}`);
