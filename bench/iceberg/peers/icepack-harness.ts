// Icepack contender of the side-by-side benchmark (run by peers.sh):
//   node bench/iceberg/peers/icepack-harness.ts decode|scan|health <metadata.json> [passes] [new|avsc]
// decode: every manifest of the current snapshot, one at a time on this thread: LocalFileIO.read +
//   decodeManifest, one ManifestEntry per entry (path string, partition object): the same work
//   as Java's projected decode (ManifestReader.select(…).entries()).
// scan:   the same files through scanManifest, reading what table health reads (sizes, counts,
//   path hash from bytes, partition bytes): no object or string per entry. New reader only.
// health: loadTableFromMetadataFile + computeTableState with a fresh ManifestCache per pass.
// Reader `new` is this checkout's; `avsc` is the avsc-based reader of the commit before it,
// extracted by peers.sh into $ICEPACK_CACHE/peers/old-reader (OLD_READER_SRC).
// Prints one JSON line: per-pass wall and process CPU seconds (process.cpuUsage), VmHWM.
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as IcebergModule from '@icepack/iceberg';

const [mode = 'decode', location = '', passesArg = '6', reader = 'new'] = process.argv.slice(2);
const passes = Number(passesArg);
const src =
  reader === 'new'
    ? fileURLToPath(new URL('../../../packages/iceberg/src/index.ts', import.meta.url))
    : `${process.env.OLD_READER_SRC ?? ''}/index.ts`;
const ice = (await import(pathToFileURL(src).href)) as typeof IcebergModule;
const { LocalFileIO, ManifestCache, computeTableState, currentSnapshot } = ice;

const io = new LocalFileIO();
const id = { catalog: 'bench', namespace: ['db'], name: 'events' };
const cpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const now = (): number => Number(process.hrtime.bigint()) / 1e9;
const vmHwmKb = (): number =>
  Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);

const results: { wall: number; cpu: number }[] = [];
let check: Record<string, number> = {};

if (mode === 'decode' || mode === 'scan') {
  // Setup (not timed): the manifest list of the current snapshot.
  const loaded = await ice.loadTableFromMetadataFile(id, location, io);
  const snapshot = currentSnapshot(loaded.metadata);
  if (snapshot === null) throw new Error('the table has no snapshot');
  const manifests = await ice.readSnapshotManifests(io, snapshot, new ManifestCache());
  for (let p = 0; p < passes; p++) {
    const c = { entries: 0, deleted: 0, bytes: 0, records: 0, pathChars: 0, deletes: 0 };
    const w0 = now();
    const c0 = cpu();
    for (const m of manifests) {
      const bytes = await io.read(m.path);
      if (mode === 'decode') {
        ice.decodeManifest(bytes, m, (e) => {
          c.entries++;
          if (e.status === 2) c.deleted++;
          if (e.content !== 0) c.deletes++;
          c.bytes += e.fileSizeInBytes;
          c.records += e.recordCount;
          c.pathChars += e.filePath.length;
        });
      } else {
        ice.scanManifest(bytes, m, (e) => {
          c.entries++;
          if (e.status === 2) c.deleted++;
          if (e.content !== 0) c.deletes++;
          c.bytes += e.fileSizeInBytes;
          c.records += e.recordCount;
          c.pathChars += e.pathEnd - e.pathStart; // ASCII paths: bytes = characters
        });
      }
    }
    results.push({ wall: now() - w0, cpu: cpu() - c0 });
    check = c;
  }
} else if (mode === 'health') {
  for (let p = 0; p < passes; p++) {
    const w0 = now();
    const c0 = cpu();
    const loaded = await ice.loadTableFromMetadataFile(id, location, io);
    const state = await computeTableState(loaded, { cache: new ManifestCache() });
    results.push({ wall: now() - w0, cpu: cpu() - c0 });
    const f = state.files;
    check = {
      dataFiles: f.dataFiles,
      smallFiles: f.smallFiles,
      deleteFiles: f.positionDeleteFiles + f.equalityDeleteFiles + f.deletionVectors,
      dataBytes: f.dataBytes,
      records: f.records,
    };
  }
} else {
  throw new Error(`mode must be decode, scan or health, not ${mode}`);
}
console.log(
  JSON.stringify({ impl: 'icepack', reader, mode, passes: results, check, vmHwmKb: vmHwmKb() }),
);
