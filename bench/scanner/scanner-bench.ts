// Metadata-scanner benchmark: discovery + scan of 10 000 tables by one replica, re-scan of
// unchanged tables, resident memory, CPU, commit event → published TableState latency.
//   node bench/scanner/scanner-bench.ts                        empty tables (no snapshots)
//   BENCH_TABLES=manifests node bench/scanner/scanner-bench.ts  3 snapshots, 50 data files each
//   BENCH_TABLES=manifests BENCH_STORE=s3 node bench/scanner/scanner-bench.ts  the same on S3
// (Kafka and Redis of the local stack must run.) A REST catalog of its own holds the tables
// (port 18281, or 18481 for manifests; state in /dev/shm); reruns reuse them, and the
// manifest tables are also archived under ~/.cache/icepack/bench (generation takes minutes).
// On S3 (1 000 tables by default), the bench's own S3 store (moto, port 18491) and REST
// catalog on it (18492). Counting proxies measure the requests and bytes of every phase: the
// scanner's REST calls, and on S3 the scanner's and the catalog's S3 requests.
import { homedir, loadavg } from 'node:os';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger, KafkaClient } from '@icepack/runtime';
import {
  createEnvelope,
  serializeEnvelope,
  tableKey,
  type TableId,
  type TableState,
} from '@icepack/types';
import { scannerEnv, setProperty, testNames, TopicReader } from '@icepack/metadata-scanner/testing';
import { infraEnv } from '@icepack/test';
import { machine } from '../iceberg/machine.ts';
import { benchRunDir, ensureTables, startBenchCatalog } from './bench-catalog.ts';
import { CountingProxy, NO_TRAFFIC, trafficBetween, type Traffic } from './counting-proxy.ts';
import {
  archiveCatalog,
  BYTES_PER_TABLE,
  ensureManifestTables,
  FILES_PER_TABLE,
  REGIONS,
  restoreCatalog,
  SNAPSHOT_FILES,
  writeLocalFile,
} from './manifest-tables.ts';
import { s3Writer, startS3BenchStore } from './s3-bench-store.ts';
import { BenchScanner, percentile, processCpuSeconds, until } from './scanner-process.ts';

const STORE = process.env.BENCH_STORE ?? 'fs';
if (STORE !== 'fs' && STORE !== 's3') throw new Error(`BENCH_STORE: fs or s3, not "${STORE}"`);
const S3 = STORE === 's3';
const MANIFESTS = process.env.BENCH_TABLES === 'manifests';
if (S3 && !MANIFESTS) {
  throw new Error('BENCH_STORE=s3 needs BENCH_TABLES=manifests (empty tables have no files)');
}
// S3 (moto, in one Python process) is slower to fill: 1 000 tables by default.
const NAMESPACES = Number(process.env.BENCH_NAMESPACES ?? (S3 ? 10 : 100));
const PER_NAMESPACE = Number(process.env.BENCH_TABLES_PER_NAMESPACE ?? 100);
const TOTAL = NAMESPACES * PER_NAMESPACE;
const LATENCY_SAMPLES = Number(process.env.BENCH_LATENCY_SAMPLES ?? 100);
const DEBOUNCE = process.env.BENCH_DEBOUNCE ?? '50ms';
const RESCANS = Number(process.env.BENCH_RESCANS ?? 1);
const catalog = 'bench';
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const tableAt = (i: number): TableId => ({
  catalog,
  namespace: ['bench', `ns${String(Math.floor(i / PER_NAMESPACE)).padStart(3, '0')}`],
  name: `t${String(i % PER_NAMESPACE).padStart(4, '0')}`,
});

const infra = infraEnv();
// One state dir per size: the scanner discovers every table of its catalog.
const size = `${NAMESPACES}x${PER_NAMESPACE}`;
const run = benchRunDir(
  S3
    ? `icepack-bench-scanner-s3-${size}`
    : MANIFESTS
      ? `icepack-bench-scanner-manifests${size === '100x100' ? '' : `-${size}`}`
      : 'icepack-bench-scanner',
);
const archive = join(homedir(), '.cache', 'icepack', 'bench', `scanner-manifests-${size}.tar.gz`);
let started = Date.now();
let uri: string;
let catalogPidFile: string;
let storePidFile: string | undefined;
let write = writeLocalFile;
let storeUri: string | undefined;
// The catalog's S3 requests go through this proxy (the catalog JVM is started pointing at it).
let catalogToS3: CountingProxy | undefined;
if (S3) {
  const store = Number(process.env.BENCH_S3_PORT ?? 18491);
  const catalogStoreProxy = Number(process.env.BENCH_S3_PROXY_PORT ?? 18493);
  catalogToS3 = await CountingProxy.start(`http://127.0.0.1:${store}`, catalogStoreProxy);
  const s3 = await startS3BenchStore(run, {
    store,
    catalog: Number(process.env.BENCH_CATALOG_PORT ?? 18492),
    catalogStoreProxy,
  });
  uri = s3.catalogUri;
  storeUri = s3.storeUri;
  catalogPidFile = s3.catalogPidFile;
  storePidFile = s3.storePidFile;
  write = s3Writer(s3.storeUri);
} else {
  if (MANIFESTS && restoreCatalog(run, archive)) {
    console.log(`catalog restored from ${archive} in ${Date.now() - started} ms`);
  }
  // Another size has a catalog of its own: not the 100 × 100 one's port.
  const port = !MANIFESTS ? 18281 : size === '100x100' ? 18481 : 18482;
  uri = startBenchCatalog(Number(process.env.BENCH_CATALOG_PORT ?? port), run);
  catalogPidFile = join(run, 'catalog', 'catalog.pid');
}
started = Date.now();
const created = MANIFESTS
  ? await ensureManifestTables(uri, run, NAMESPACES, PER_NAMESPACE, write)
  : await ensureTables(uri, NAMESPACES, PER_NAMESPACE);
console.log(
  `tables: ${TOTAL} (${created} created in ${((Date.now() - started) / 1000).toFixed(0)} s; load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')})`,
);
// moto keeps objects in memory: nothing to archive on S3.
if (MANIFESTS && !S3 && (created > 0 || !existsSync(archive))) {
  started = Date.now();
  archiveCatalog(run, archive);
  console.log(`catalog archived to ${archive} in ${Date.now() - started} ms`);
}
const pidIn = (file: string) => Number(readFileSync(file, 'utf8').split(/\s/)[0]);
// The bench catalog's JVM (and the S3 store): their CPU is part of every scan's cost.
const catalogPid = pidIn(catalogPidFile);
const storePid = storePidFile === undefined ? undefined : pidIn(storePidFile);
// What the scanner sends, counted on the way: its REST calls, and its S3 reads.
const scannerToCatalog = await CountingProxy.start(uri);
const scannerToS3 = storeUri === undefined ? undefined : await CountingProxy.start(storeUri);
const proxies: Record<string, CountingProxy | undefined> = {
  'scanner → catalog (REST)': scannerToCatalog,
  'scanner → S3': scannerToS3,
  'catalog → S3': catalogToS3,
};
const traffic = (): Record<string, Traffic> =>
  Object.fromEntries(
    Object.entries(proxies).map(([k, p]) => [k, p === undefined ? NO_TRAFFIC : p.traffic()]),
  );
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
interface Phase {
  readonly ms: number;
  readonly scannerCpu: number;
  readonly catalogCpu: number;
  readonly storeCpu: number;
  readonly loadBefore: string;
  readonly loadAfter: string;
  readonly traffic: Record<string, Traffic>;
}
const storeCpuSeconds = () => (storePid === undefined ? 0 : processCpuSeconds(storePid));
async function phase(work: () => Promise<void>): Promise<Phase> {
  const loadBefore = load();
  const scannerCpu = scanner === undefined ? 0 : scanner.cpuSeconds();
  const catalogCpu = processCpuSeconds(catalogPid);
  const storeCpu = storeCpuSeconds();
  const before = traffic();
  const begin = Date.now();
  await work();
  const after = traffic();
  return {
    ms: Date.now() - begin,
    scannerCpu: scanner!.cpuSeconds() - scannerCpu,
    catalogCpu: processCpuSeconds(catalogPid) - catalogCpu,
    storeCpu: storeCpuSeconds() - storeCpu,
    loadBefore,
    loadAfter: load(),
    traffic: Object.fromEntries(
      Object.keys(after).map((k) => [k, trafficBetween(before[k]!, after[k]!)]),
    ),
  };
}
const perTable = (cpu: number) => `${((cpu / TOTAL) * 1000).toFixed(2)} ms`;
const cpuLine = (p: Phase) =>
  `CPU per table: scanner ${perTable(p.scannerCpu)}, catalog ${perTable(p.catalogCpu)}${S3 ? `, S3 store ${perTable(p.storeCpu)}` : ''}; load ${p.loadBefore} → ${p.loadAfter}`;
/** One row per client → server of a phase, per table (or per commit): requests, by kind, bytes. */
const trafficRows = (name: string, p: Phase, per: number) =>
  Object.entries(p.traffic)
    .filter(([k]) => proxies[k] !== undefined)
    .map(([k, t]) => {
      const f = (n: number) => (n / per).toFixed(n / per < 10 ? 2 : 0);
      const kinds = Object.entries(t.byRequest)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([kind, n]) => `${kind}: ${f(n)}`)
        .join(', ');
      return `| ${name} | ${k} | ${f(t.requests)} | ${kinds || '–'} | ${f(t.responseBodyBytes)} | ${f(t.requestBodyBytes)} | ${f(t.headerBytes)} | ${t.connections} |`;
    })
    .join('\n');

const names = testNames();
const memoryOut = process.env.BENCH_MEMORY_OUT;
const nodeOptions = [
  ...(process.env.BENCH_PROFILE === undefined
    ? []
    : ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]),
  ...(memoryOut === undefined ? [] : [`--import=${join(import.meta.dirname, 'memory-probe.ts')}`]),
];
const env = scannerEnv(infra, names, {
  bootstrap: {
    catalogs: [
      {
        name: catalog,
        type: 'rest',
        uri: scannerToCatalog.uri,
        ...(scannerToS3 === undefined
          ? {}
          : {
              properties: {
                's3.endpoint': scannerToS3.uri,
                's3.path-style-access': 'true',
                'client.region': 'us-east-1',
              },
            }),
      },
    ],
    bindings: [catalog],
  },
  extra: {
    // S3 keys from the SDK's default chain, as a deployment gives them; moto takes any.
    ...(S3
      ? { AWS_ACCESS_KEY_ID: 'icepack', AWS_SECRET_ACCESS_KEY: 'icepack', AWS_REGION: 'us-east-1' }
      : {}),
    ICEPACK_LOG_LEVEL: 'info',
    ICEPACK_SCANNER_DISCOVERY_INTERVAL: '1h',
    ICEPACK_SCANNER_DEBOUNCE: DEBOUNCE,
    ICEPACK_SCANNER_SCAN_PARTITIONS: '12',
    // BENCH_PROFILE=<dir>: a V8 CPU profile of the scanner process, written when it stops.
    // BENCH_MEMORY_OUT=<file>: the memory probe, sampled after the first sweep and each re-scan.
    ...(nodeOptions.length === 0 ? {} : { NODE_OPTIONS: nodeOptions.join(' ') }),
  },
});

// 1. Discovery and first scan of every table, one replica.
let scanner: BenchScanner | undefined;
/** The memory probe's samples (BENCH_MEMORY_OUT), one per point of the run. */
interface MemorySample {
  readonly label: string;
  readonly found: NodeJS.MemoryUsage;
  readonly collected: NodeJS.MemoryUsage;
  /** V8's heap size limit in the scanner (from --max-old-space-size, or the machine's or cgroup's memory). */
  readonly limit?: number;
}
const memory: MemorySample[] = [];
const probeLines = (file: string) =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];
async function sampleMemory(label: string): Promise<void> {
  if (memoryOut === undefined || scanner === undefined) return;
  const seen = probeLines(memoryOut).length;
  process.kill(scanner.child.pid!, 'SIGUSR2');
  await until(
    () => Promise.resolve(probeLines(memoryOut).length > seen),
    300_000,
    `memory sample ${label}`,
  );
  const sample = JSON.parse(probeLines(memoryOut)[seen]!) as Omit<MemorySample, 'label'>;
  memory.push({ label, ...sample });
}
let readyMs = 0;
const first = await phase(async () => {
  const begin = Date.now();
  scanner = await BenchScanner.start(env);
  readyMs = Date.now() - begin;
  await until(
    async () =>
      (await scanner!.metric('icepack_scanner_tables_scanned_total', { catalog })) >= TOTAL,
    600_000,
    'every table scanned',
  );
});
if (scanner === undefined) throw new Error('no scanner');
if (S3 && first.traffic['scanner → S3']!.requests === 0) {
  // The table config from the catalog wins over the catalog's properties: a catalog that
  // vends its own `s3.endpoint` would send the scanner's reads around the counting proxy.
  throw new Error('no S3 request of the scanner went through its counting proxy (s3.endpoint)');
}
const sweeper: BenchScanner = scanner;
const firstScanMs = first.ms;
const walk = scanner.lines.find((l) => l.msg === 'discovery walk finished');
const rssAfterScan = scanner.rssBytes();
await sampleMemory('after the first sweep');
const states = await TopicReader.start(infra.kafkaBrokers, names.tableState);
if (MANIFESTS) {
  // The scanner really read the manifests: a first and a last table's published figures.
  for (const table of [tableAt(0), tableAt(TOTAL - 1)]) {
    const message = await states.waitFor(
      () => states.byKey(tableKey(table)).at(-1),
      `the state of ${tableKey(table)}`,
    );
    const state = message.value?.payload as TableState;
    const got = {
      dataFiles: state.files.dataFiles,
      dataBytes: state.files.dataBytes,
      partitions: state.partitions.length,
      snapshots: state.snapshots.total,
    };
    const want = {
      dataFiles: FILES_PER_TABLE,
      dataBytes: BYTES_PER_TABLE,
      partitions: REGIONS,
      snapshots: SNAPSHOT_FILES.length,
    };
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      throw new Error(
        `${tableKey(table)}: state ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`,
      );
    }
    console.log(`${tableKey(table)}: ${JSON.stringify(got)} (as generated)`);
  }
}

let rssAfterRescan = 0;

// 2. Re-scan of unchanged tables: one scan request per table, published in batches.
const logger = createLogger({ service: 'bench', level: 'silent' });
const kafka = new KafkaClient({ brokers: infra.kafkaBrokers, clientId: 'bench', logger });
const raw = kafka.kafka.producer();
await raw.connect();
const rescans: Phase[] = [];
for (let r = 0; r < RESCANS; r++) {
  const skippedBefore = await scanner.metric('icepack_scanner_tables_skipped_total', {
    catalog,
    reason: 'unchanged',
  });
  rescans.push(
    await phase(async () => {
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
          (await sweeper.metric('icepack_scanner_tables_skipped_total', {
            catalog,
            reason: 'unchanged',
          })) -
            skippedBefore >=
          TOTAL,
        600_000,
        'every re-scan skipped',
      );
    }),
  );
  if (r === RESCANS - 1) rssAfterRescan = scanner.rssBytes();
  await sampleMemory(`after re-scan ${r + 1}`);
}
if (RESCANS === 0) rssAfterRescan = scanner.rssBytes();

// 3. Commit event → TableState: a metadata commit, its event, until the state arrives.
const latencies: number[] = [];
const commits = await phase(async () => {
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
});
latencies.sort((a, b) => a - b);

await states.stop();
await raw.disconnect();
await kafka.close();
await scanner.stop();
for (const proxy of Object.values(proxies)) await proxy?.close();

console.log(`
${machine()}

| measure | result | target |
|---|---|---|
| discovery + first scan of ${TOTAL} tables (${STORE}), 1 replica (process start → last state published) | ${(firstScanMs / 1000).toFixed(1)} s = ${((TOTAL / firstScanMs) * 1000).toFixed(0)} tables/s (ready after ${readyMs} ms; walk ${String(walk?.durationMs)} ms) | ≤ 60 s |
| re-scan of ${TOTAL} unchanged tables (requests published → all skipped) | ${rescans.map((p) => `${(p.ms / 1000).toFixed(1)} s = ${((TOTAL / p.ms) * 1000).toFixed(0)} tables/s`).join('; ')} | ≥ 500 tables/s |
| resident memory after the first scan / after the re-scan | ${mib(rssAfterScan)} / ${mib(rssAfterRescan)} | ≤ 512 MiB |
| commit event → TableState (${LATENCY_SAMPLES} samples, debounce ${DEBOUNCE}) | p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, max ${latencies.at(-1)} ms | p99 ≤ 1 s |

- first sweep: ${cpuLine(first)}
${rescans.map((p, i) => `- re-scan ${i + 1}: ${cpuLine(p)}`).join('\n')}

Requests and bytes per table scanned (commits: per commit, the bench's own commit included),
counted by proxies on the way; bytes as sent (the catalog's answers ${process.env.ICEPACK_SCANNER_CATALOG_GZIP === 'true' ? 'gzip-compressed' : 'uncompressed, the scanner asks for identity'}):

| phase | client → server | requests | by method and status | response body bytes | request body bytes | header bytes | connections opened |
|---|---|---|---|---|---|---|---|
${[
  trafficRows('first scan', first, TOTAL),
  ...rescans.map((p, i) => trafficRows(`re-scan ${i + 1}`, p, TOTAL)),
  trafficRows(`commit → state`, commits, Math.max(1, LATENCY_SAMPLES)),
].join('\n')}
${memory.length === 0 ? '' : memoryTable(memory)}`);

/** As found, then after a full GC (the probe's): MiB of RSS, V8 heap used/total, external, array buffers. */
function memoryTable(samples: readonly MemorySample[]): string {
  const m = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
  const row = (u: NodeJS.MemoryUsage) =>
    `${m(u.rss)} | ${m(u.heapUsed)} / ${m(u.heapTotal)} | ${m(u.external)} | ${m(u.arrayBuffers)}`;
  return `
Scanner memory (MiB; process.memoryUsage() in the scanner, by the memory probe), as found and after a full GC${samples[0]?.limit === undefined ? '' : ` (V8 heap size limit ${m(samples[0].limit)} MiB${process.env.BENCH_SCANNER_CGROUP === undefined ? '' : `; cgroup ${process.env.BENCH_SCANNER_CGROUP}`})`}:

| point | RSS | heap used / total | external | array buffers | after GC: RSS | heap used / total | external | array buffers |
|---|---|---|---|---|---|---|---|---|
${samples.map((s) => `| ${s.label} | ${row(s.found)} | ${row(s.collected)} |`).join('\n')}
`;
}
