// Client CPU of an unchanged re-scan's load, before/after `knownMetadataLocation`, alternating
// per round on the same tables of the manifest bench catalog (BENCH_TABLES=manifests has made them):
//   node bench/scanner/unchanged-load.ts [tables=1000] [rounds=4]
import { RestCatalog } from '@icepack/iceberg';
const TABLES = Number(process.argv[2] ?? 1000);
const ROUNDS = Number(process.argv[3] ?? 4);
const uri = `http://127.0.0.1:${process.env.BENCH_CATALOG_PORT ?? 18481}`;
const catalog = new RestCatalog({ name: 'bench', uri, localFiles: true });
const ids = Array.from({ length: TABLES }, (_, i) => ({
  catalog: 'bench',
  namespace: ['bench', `ns${String(Math.floor(i / 100)).padStart(3, '0')}`],
  name: `t${String(i % 100).padStart(4, '0')}`,
}));
const known = new Map<string, string>();
for (const id of ids) {
  const outcome = await catalog.loadTable(id);
  if (outcome.status === 'loaded')
    known.set(id.name + id.namespace.join('.'), outcome.table.metadataLocation);
}
for (let round = 0; round < ROUNDS; round++) {
  for (const mode of ['full parse (before)', 'location only (after)'] as const) {
    const cpu = process.cpuUsage();
    for (const id of ids) {
      const location = known.get(id.name + id.namespace.join('.'))!;
      const outcome = await catalog.loadTable(
        id,
        mode === 'full parse (before)' ? {} : { knownMetadataLocation: location },
      );
      // Before: the scanner compared the location after the full parse.
      if (outcome.status === 'loaded' && outcome.table.metadataLocation !== location)
        throw new Error('moved');
    }
    const used = process.cpuUsage(cpu);
    console.log(
      `round ${round} ${mode}: ${((used.user + used.system) / 1000 / TABLES).toFixed(3)} ms CPU per load`,
    );
  }
}
