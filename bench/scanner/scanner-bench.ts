// Metadata-scanner benchmark: discovery + scan of 10 000 tables by one replica, re-scan of
// unchanged tables, resident memory, commit event → published TableState latency.
//   node bench/scanner/scanner-bench.ts            (Kafka and Redis of the local stack must run)
// A second REST catalog (port 18281, own state dir) holds the tables; reruns reuse them.
import { createLogger, KafkaClient } from '@icepack/runtime';
import { createEnvelope, serializeEnvelope, tableKey, type TableId } from '@icepack/types';
import { scannerEnv, setProperty, testNames, TopicReader } from '@icepack/metadata-scanner/testing';
import { infraEnv } from '@icepack/test';
import { machine } from '../iceberg/machine.ts';
import { ensureTables, startBenchCatalog } from './bench-catalog.ts';
import { BenchScanner, percentile, until } from './scanner-process.ts';

const NAMESPACES = Number(process.env.BENCH_NAMESPACES ?? 100);
const PER_NAMESPACE = Number(process.env.BENCH_TABLES_PER_NAMESPACE ?? 100);
const TOTAL = NAMESPACES * PER_NAMESPACE;
const LATENCY_SAMPLES = Number(process.env.BENCH_LATENCY_SAMPLES ?? 100);
const DEBOUNCE = process.env.BENCH_DEBOUNCE ?? '50ms';
const catalog = 'bench';
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const tableAt = (i: number): TableId => ({
  catalog,
  namespace: ['bench', `ns${String(Math.floor(i / PER_NAMESPACE)).padStart(3, '0')}`],
  name: `t${String(i % PER_NAMESPACE).padStart(4, '0')}`,
});

const infra = infraEnv();
const uri = startBenchCatalog(Number(process.env.BENCH_CATALOG_PORT ?? 18281));
let started = Date.now();
const created = await ensureTables(uri, NAMESPACES, PER_NAMESPACE);
console.log(
  `tables: ${TOTAL} (${created} created in ${((Date.now() - started) / 1000).toFixed(0)} s)`,
);

const names = testNames();
const env = scannerEnv(infra, names, {
  bootstrap: { catalogs: [{ name: catalog, type: 'rest', uri }], bindings: [catalog] },
  extra: {
    ICEPACK_LOG_LEVEL: 'info',
    ICEPACK_SCANNER_DISCOVERY_INTERVAL: '1h',
    ICEPACK_SCANNER_DEBOUNCE: DEBOUNCE,
    ICEPACK_SCANNER_SCAN_PARTITIONS: '12',
  },
});

// 1. Discovery and first scan of every table, one replica.
started = Date.now();
const scanner = await BenchScanner.start(env);
const readyMs = Date.now() - started;
await until(
  async () => (await scanner.metric('icepack_scanner_tables_scanned_total', { catalog })) >= TOTAL,
  600_000,
  'every table scanned',
);
const firstScanMs = Date.now() - started;
const walk = scanner.lines.find((l) => l.msg === 'discovery walk finished');
const rssAfterScan = scanner.rssBytes();

// 2. Re-scan of unchanged tables: one scan request per table, published in batches.
const logger = createLogger({ service: 'bench', level: 'silent' });
const kafka = new KafkaClient({ brokers: infra.kafkaBrokers, clientId: 'bench', logger });
const raw = kafka.kafka.producer();
await raw.connect();
const skippedBefore = await scanner.metric('icepack_scanner_tables_skipped_total', {
  catalog,
  reason: 'unchanged',
});
started = Date.now();
for (let i = 0; i < TOTAL; i += 500) {
  const messages = [];
  for (let j = i; j < Math.min(TOTAL, i + 500); j++) {
    const table = tableAt(j);
    const envelope = createEnvelope('ScanTable', tableKey(table), {
      table,
      reason: 'manual',
      requestedAt: new Date().toISOString(),
    });
    messages.push({ key: tableKey(table), value: serializeEnvelope(envelope) });
  }
  await raw.send({ topic: names.scanRequests, messages });
}
await until(
  async () =>
    (await scanner.metric('icepack_scanner_tables_skipped_total', {
      catalog,
      reason: 'unchanged',
    })) -
      skippedBefore >=
    TOTAL,
  600_000,
  'every re-scan skipped',
);
const rescanMs = Date.now() - started;
const rssAfterRescan = scanner.rssBytes();

// 3. Commit event → TableState: a metadata commit, its event, until the state arrives.
const states = await TopicReader.start(infra.kafkaBrokers, names.tableState);
const latencies: number[] = [];
for (let i = 0; i < LATENCY_SAMPLES; i++) {
  const table = tableAt((i * 97) % TOTAL);
  await setProperty(uri, table, 'bench', String(i));
  const ns = encodeURIComponent(table.namespace.join('\u001f'));
  const location = (
    (await (await fetch(`${uri}/v1/namespaces/${ns}/tables/${table.name}`)).json()) as {
      'metadata-location': string;
    }
  )['metadata-location'];
  const envelope = createEnvelope('CommitObserved', tableKey(table), { table });
  const sentAt = Date.now();
  await raw.send({
    topic: names.commits,
    messages: [{ key: tableKey(table), value: serializeEnvelope(envelope) }],
  });
  const message = await states.waitFor(
    () =>
      states
        .byKey(tableKey(table))
        .find(
          (m) =>
            (m.value?.payload as { metadataLocation?: string } | undefined)?.metadataLocation ===
            location,
        ),
    'the state after the commit',
  );
  latencies.push(message.receivedAt - sentAt);
}
latencies.sort((a, b) => a - b);

await states.stop();
await raw.disconnect();
await kafka.close();
await scanner.stop();

console.log(`
${machine()}

| measure | result | target |
|---|---|---|
| discovery + first scan of ${TOTAL} tables, 1 replica (process start → last state published) | ${(firstScanMs / 1000).toFixed(1)} s = ${((TOTAL / firstScanMs) * 1000).toFixed(0)} tables/s (ready after ${readyMs} ms; walk ${String(walk?.durationMs)} ms) | ≤ 60 s |
| re-scan of ${TOTAL} unchanged tables (requests published → all skipped) | ${(rescanMs / 1000).toFixed(1)} s = ${((TOTAL / rescanMs) * 1000).toFixed(0)} tables/s | ≥ 500 tables/s |
| resident memory after the first scan / after the re-scan | ${mib(rssAfterScan)} / ${mib(rssAfterRescan)} | ≤ 512 MiB |
| commit event → TableState (${LATENCY_SAMPLES} samples, debounce ${DEBOUNCE}) | p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, max ${latencies.at(-1)} ms | p99 ≤ 1 s |
`);
