// The first sweep's per-table work in one process, another checkout's code ("before") and this
// one's ("after") alternating per round on the same tables of the manifest bench catalog
// (BENCH_TABLES=manifests has made them; its catalog on 18481 must run):
//   node bench/scanner/first-sweep-parts.ts <other checkout> [tables=1000] [rounds=4]
// - load + state: `loadTable` and `computeTableState` of a table never seen (a new manifest
//   cache each round), 8 at a time as the scanner's catalog concurrency; before: gzip answers
//   and `fs/promises` reads; after: `compressedResponses: false` and in-place reads.
// - publish: one TableState-sized `TableScanned` per table through an `EnvelopeProducer`,
//   12 lanes at once as the scanner's partition concurrency (local Kafka); before: one
//   produce request per publish; after: publishes queued behind the one in flight share one.
// CPU of this process per table (user + system, `process.cpuUsage`), so load on the machine
// matters less than for wall-clock figures.
import { resolve } from 'node:path';
import * as afterIceberg from '@icepack/iceberg';
import * as afterRuntime from '@icepack/runtime';
import { infraEnv } from '@icepack/test';
import type { TableState } from '@icepack/types';

const other = resolve(process.argv[2] ?? '');
const TABLES = Number(process.argv[3] ?? 1000);
const ROUNDS = Number(process.argv[4] ?? 4);
const beforeIceberg = (await import(
  resolve(other, 'packages/iceberg/src/index.ts')
)) as typeof afterIceberg;
const beforeRuntime = (await import(
  resolve(other, 'packages/runtime/src/index.ts')
)) as typeof afterRuntime;

const uri = `http://127.0.0.1:${process.env.BENCH_CATALOG_PORT ?? 18481}`;
const ids = Array.from({ length: TABLES }, (_, i) => ({
  catalog: 'bench',
  namespace: ['bench', `ns${String(Math.floor(i / 100)).padStart(3, '0')}`],
  name: `t${String(i % 100).padStart(4, '0')}`,
}));
const logger = afterRuntime.createLogger({ service: 'bench', level: 'silent' });
const kafka = new afterRuntime.KafkaClient({
  brokers: infraEnv().kafkaBrokers,
  clientId: 'bench-first-sweep-parts',
  logger,
});
const topic = `bench.first-sweep-parts.${process.pid}`;
await afterRuntime.ensureTopics(kafka, [{ name: topic, cleanupPolicy: 'delete', partitions: 12 }]);

const sides = {
  before: {
    catalog: new beforeIceberg.RestCatalog({ name: 'bench', uri, localFiles: true }),
    iceberg: beforeIceberg,
    producer: new beforeRuntime.EnvelopeProducer(kafka),
  },
  after: {
    catalog: new afterIceberg.RestCatalog({
      name: 'bench',
      uri,
      localFiles: true,
      compressedResponses: false,
    }),
    iceberg: afterIceberg,
    producer: new afterRuntime.EnvelopeProducer(kafka),
  },
};
for (const side of Object.values(sides)) await side.producer.connect();

async function lanes(count: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: count }, async () => {
      while (next < TABLES) await work(next++);
    }),
  );
}

const states: TableState[] = [];
const perTable = (used: NodeJS.CpuUsage) => ((used.user + used.system) / 1000 / TABLES).toFixed(3);
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, side] of Object.entries(sides)) {
    const cache = new side.iceberg.ManifestCache();
    let cpu = process.cpuUsage();
    await lanes(8, async (i) => {
      const outcome = await side.catalog.loadTable(ids[i]!);
      if (outcome.status !== 'loaded') throw new Error('not loaded');
      states[i] = await side.iceberg.computeTableState(outcome.table, { cache });
    });
    const load = perTable(process.cpuUsage(cpu));
    if (states[0]!.files.dataFiles !== 50) throw new Error('not the manifest tables');
    cpu = process.cpuUsage();
    await lanes(12, async (i) => {
      await side.producer.publish(topic, 'TableScanned', `bench/${String(i)}`, states[i]!);
    });
    const publish = perTable(process.cpuUsage(cpu));
    console.log(
      `round ${round} ${name}: load + state ${load} ms, publish ${publish} ms CPU per table`,
    );
  }
}
for (const side of Object.values(sides)) await side.producer.disconnect();
await afterRuntime.deleteTopics(kafka, [topic]);
await kafka.close();
