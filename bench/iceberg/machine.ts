import { cpus, totalmem } from 'node:os';
import { execFileSync } from 'node:child_process';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** The machine a result was measured on: recorded with every result. */
export function machine(): string {
  const free = (() => {
    try {
      return execFileSync('free', ['-h'], { encoding: 'utf8' }).trim();
    } catch {
      return `total memory ${(totalmem() / 2 ** 30).toFixed(1)} GiB`;
    }
  })();
  return [
    `date: ${new Date().toISOString()}`,
    `node: ${process.version}`,
    `nproc: ${cpus().length}`,
    `cpu: ${cpus()[0]?.model ?? 'unknown'}`,
    'free -h:',
    free,
  ].join('\n');
}

setFlagsFromString('--expose-gc');
/** A full GC (so heap figures mean something), without needing `node --expose-gc`. */
export const gc = runInNewContext('gc') as () => void;

export function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

export function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}
