// Preloaded into a benchmarked process (`node --import <this file> …`, set by the scanner
// bench when BENCH_MEMORY_OUT is set): on SIGUSR2 it appends one JSON line to
// $BENCH_MEMORY_OUT with `process.memoryUsage()` as found, then again after a full garbage
// collection (garbage is what that GC frees; what stays is retained), with V8's heap spaces
// and heap size limit.
// BENCH_MEMORY_GC=0: no collection (the figures as found only, the process left undisturbed).
// BENCH_HEAP_SNAPSHOT_DIR=<dir>: also writes a heap snapshot there after the GC.
// No code of the process changes; it works on any checkout's scanner (BENCH_SCANNER_ENTRY).
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  getHeapSpaceStatistics,
  getHeapStatistics,
  setFlagsFromString,
  writeHeapSnapshot,
} from 'node:v8';
import { runInNewContext } from 'node:vm';

const out = process.env.BENCH_MEMORY_OUT;
if (out !== undefined) {
  setFlagsFromString('--expose-gc');
  const gc = process.env.BENCH_MEMORY_GC === '0' ? () => {} : (runInNewContext('gc') as () => void);
  const snapshots = process.env.BENCH_HEAP_SNAPSHOT_DIR;
  let taken = 0;
  process.on('SIGUSR2', () => {
    const found = process.memoryUsage();
    gc();
    const collected = process.memoryUsage();
    const limit = getHeapStatistics().heap_size_limit;
    const spaces = Object.fromEntries(
      getHeapSpaceStatistics().map((s) => [s.space_name, s.space_used_size]),
    );
    const snapshot =
      snapshots === undefined
        ? undefined
        : writeHeapSnapshot(join(snapshots, `scanner-${process.pid}-${taken++}.heapsnapshot`));
    appendFileSync(
      out,
      `${JSON.stringify({ at: new Date().toISOString(), found, collected, limit, spaces, snapshot })}\n`,
    );
  });
}
