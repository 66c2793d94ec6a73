// Health of a table with 10,000 data files (cold and incremental), and tables loaded and
// health computed per second (from metadata files, and through the local REST catalog when
// it runs). Run: node bench/iceberg/table-health.ts [data-files]
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  LocalFileIO,
  ManifestCache,
  RestCatalog,
  clearCompiledReaders,
  computeTableState,
  loadTableFromMetadataFile,
} from '@icepack/iceberg';
import { TestTableWriter, type TestEntry } from '@icepack/iceberg/testing';
import type { TableId, TableState } from '@icepack/types';
import { machine } from './machine.ts';

const dataFiles = Number(process.argv[2] ?? 10_000);
const perManifest = 100;
const io = new LocalFileIO();
const id: TableId = { catalog: 'bench', namespace: ['db'], name: 'events' };
const fmt = (n: number): string => Math.round(n).toLocaleString('en');

/** Wall time, and CPU time of this process (the machine is shared: wall time alone lies). */
function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; cpuMs: number }> {
  const start = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  return fn().then((value) => {
    const used = process.cpuUsage(cpu);
    return {
      value,
      ms: Number(process.hrtime.bigint() - start) / 1e6,
      cpuMs: (used.user + used.system) / 1000,
    };
  });
}

let fileNo = 0;
function files(n: number, day: number): TestEntry[] {
  return Array.from({ length: n }, (_, i) => ({
    path: `s3://warehouse/db/events/data/region=${['eu', 'us', 'ap'][i % 3]}/day=${day}/${fileNo++}-4f1e4c38-2b57-4f80-9ad2-1c8f1e8a5c11.parquet`,
    partition: { region: ['eu', 'us', 'ap'][i % 3], day },
    recordCount: 10_000 + i,
    sizeBytes: i % 4 === 0 ? 200 * 2 ** 20 : 3 * 2 ** 20 + i,
    statsColumns: 12,
  }));
}

// A table after many streaming appends: 2 manifests per commit, plus merge-on-read deletes.
const dir = await mkdtemp(join(tmpdir(), 'icepack-bench-health-'));
const table = new TestTableWriter(dir, {
  formatVersion: 2,
  partitionFields: [
    { name: 'region', type: 'string', sourceId: 3 },
    { name: 'day', type: 'int', sourceId: 2, transform: 'day' },
  ],
});
const commits = Math.ceil(dataFiles / (2 * perManifest));
let location = '';
for (let c = 0; c < commits; c++) {
  const day = 20_000 + (c % 30);
  location = await table.commit({
    operation: 'append',
    summary: {
      'added-data-files': String(2 * perManifest),
      'added-records': '0',
      'added-files-size': '0',
    },
    newManifests: [{ entries: files(perManifest, day) }, { entries: files(perManifest, day) }],
  });
}
location = await table.commit({
  operation: 'delete',
  newManifests: [
    {
      content: 'deletes',
      entries: Array.from({ length: 200 }, (_, i) => ({
        content: 1 as const,
        path: `s3://warehouse/db/events/data/deletes-${i}.parquet`,
        partition: { region: 'eu', day: 20_000 + (i % 30) },
        recordCount: 5,
        sizeBytes: 2_000,
      })),
    },
  ],
});

// Cold: a fresh process's view (decoders compiled, nothing cached); files in the OS cache.
clearCompiledReaders();
const coldCache = new ManifestCache();
const cold = await timed(async () =>
  computeTableState(await loadTableFromMetadataFile(id, location, io), { cache: coldCache }),
);
const coldReads = { ...coldCache.stats };
const coldRuns: { ms: number; cpuMs: number }[] = [];
for (let i = 0; i < 3; i++) {
  clearCompiledReaders();
  coldRuns.push(
    await timed(async () =>
      computeTableState(await loadTableFromMetadataFile(id, location, io), {
        cache: new ManifestCache(),
      }),
    ),
  );
}
coldRuns.sort((a, b) => a.cpuMs - b.cpuMs);

// Incremental: one more append; the cache holds every earlier manifest's aggregate.
const previous: TableState = cold.value;
const nextLocation = await table.commit({
  operation: 'append',
  summary: { 'added-data-files': '20', 'added-records': '1', 'added-files-size': '1' },
  newManifests: [{ entries: files(20, 20_031) }],
});
coldCache.resetStats();
const incremental = await timed(async () =>
  computeTableState(await loadTableFromMetadataFile(id, nextLocation, io), {
    cache: coldCache,
    previous,
  }),
);
const incrementalReads = { ...coldCache.stats };
const unchanged = await timed(async () =>
  computeTableState(await loadTableFromMetadataFile(id, nextLocation, io), {
    cache: coldCache,
    previous: incremental.value,
  }),
);

// Tables per second: 20 small tables (30 files, 15 manifests each), cold and warm.
const small: string[] = [];
for (let t = 0; t < 20; t++) {
  const w = new TestTableWriter(join(dir, `small-${t}`), {
    formatVersion: 2,
    partitionFields: [{ name: 'region', type: 'string', sourceId: 3 }],
  });
  let loc = '';
  for (let c = 0; c < 15; c++)
    loc = await w.commit({ operation: 'append', newManifests: [{ entries: files(2, 20_000) }] });
  small.push(loc);
}
const rounds = 10;
const smallCold = await timed(async () => {
  for (let r = 0; r < rounds; r++)
    for (const loc of small)
      await computeTableState(await loadTableFromMetadataFile(id, loc, io), {
        cache: new ManifestCache(),
      });
});
const warmCache = new ManifestCache();
for (const loc of small)
  await computeTableState(await loadTableFromMetadataFile(id, loc, io), { cache: warmCache });
const smallWarm = await timed(async () => {
  for (let r = 0; r < rounds; r++)
    for (const loc of small)
      await computeTableState(await loadTableFromMetadataFile(id, loc, io), { cache: warmCache });
});

// Through the local REST catalog (real HTTP + JSON), when it runs.
const catalogUri = `http://127.0.0.1:${process.env.ICEPACK_CATALOG_PORT ?? '18181'}`;
let restLine = `REST catalog at ${catalogUri} not reachable: not measured.`;
try {
  const catalog = new RestCatalog({
    name: 'fixtures',
    uri: catalogUri,
    retry: { maxAttempts: 1 },
    timeoutMs: 5_000,
  });
  const ids: TableId[] = [];
  for await (const tableId of catalog.walkTables()) ids.push(tableId);
  const cache = new ManifestCache();
  const states = new Map<string, { etag?: string; state: TableState }>();
  const restCold = await timed(async () => {
    for (const tableId of ids) {
      const outcome = await catalog.loadTable(tableId);
      if (outcome.status === 'loaded') {
        const state = await computeTableState(outcome.table, { cache });
        states.set(JSON.stringify(tableId), {
          ...(outcome.table.etag === undefined ? {} : { etag: outcome.table.etag }),
          state,
        });
      }
    }
  });
  const restWarm = await timed(async () => {
    for (const tableId of ids) {
      const known = states.get(JSON.stringify(tableId));
      const outcome = await catalog.loadTable(
        tableId,
        known?.etag === undefined ? {} : { etag: known.etag },
      );
      if (outcome.status === 'loaded')
        await computeTableState(outcome.table, {
          cache,
          ...(known === undefined ? {} : { previous: known.state }),
        });
    }
  });
  restLine =
    `Through the REST catalog (${ids.length} tables found by walking every namespace): ` +
    `cold ${fmt((ids.length / restCold.ms) * 1000)} tables/s, warm (manifest cache, previous state) ${fmt((ids.length / restWarm.ms) * 1000)} tables/s.`;
} catch (error) {
  restLine += ` (${(error as Error).message})`;
}

await rm(dir, { recursive: true, force: true });

const median = coldRuns[1]!;
const ms = (t: { ms: number; cpuMs: number }): string =>
  `${t.ms.toFixed(1)} ms (CPU ${t.cpuMs.toFixed(1)} ms)`;
console.log(`## Table health (${new Date().toISOString().slice(0, 10)})

\`node bench/iceberg/table-health.ts ${dataFiles}\` — a v2 table partitioned by region and day after ${commits} appends
(${cold.value.files.dataFiles} data files in ${coldReads.manifestsRead - 1} data manifests of ${perManifest} entries, statistics for 12 columns) and
one merge-on-read delete (200 position-delete files). Load = read and parse the metadata JSON (${commits + 1} snapshots).

| case | time | read |
|---|---|---|
| cold: load + health, nothing cached (first run) | ${ms(cold)} | ${coldReads.manifestsRead} manifests, ${fmt(coldReads.entriesDecoded)} entries |
| cold: median of 3 more runs (by CPU time) | ${ms(median)} | same |
| incremental: one more append, previous state + cache | ${ms(incremental)} | ${incrementalReads.manifestsRead} manifest, ${incrementalReads.manifestListsRead} manifest list |
| unchanged metadata location | ${ms(unchanged)} | nothing beyond the metadata JSON |

Target: health of a 10,000-file table in under 0.5 s: **${median.cpuMs < 500 ? 'met' : 'not met'}** (cold median: CPU ${median.cpuMs.toFixed(0)} ms, wall ${median.ms.toFixed(0)} ms).

Small tables (30 files, 15 manifests, 15 snapshots each; ${small.length} tables × ${rounds} rounds):
cold ${fmt((small.length * rounds * 1000) / smallCold.ms)} tables/s, warm (aggregates cached) ${fmt((small.length * rounds * 1000) / smallWarm.ms)} tables/s.

${restLine}

Load average while measuring: ${loadavg()
  .map((l) => l.toFixed(1))
  .join(' / ')} on ${cpus().length} cores.
`);
console.log('```\n' + machine() + '\n```');
