import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { scannerEntry } from '@icepack/metadata-scanner/testing';

/** A scanner run as its own process, with its pid (for resident memory) and log lines. */
export class BenchScanner {
  readonly lines: Record<string, unknown>[] = [];
  readonly child: ChildProcess;
  port = 0;

  private constructor(child: ChildProcess) {
    this.child = child;
  }

  /** `entry`: another checkout's scanner (`BENCH_SCANNER_ENTRY`), to compare before/after. */
  static async start(
    env: Record<string, string>,
    entry = process.env.BENCH_SCANNER_ENTRY ?? scannerEntry,
  ): Promise<BenchScanner> {
    // BENCH_SCANNER_CGROUP=<dir of a cgroup>: the scanner runs in it from its first
    // instruction (a memory limit as a pod's; Node sizes its heap from the cgroup's limit).
    const cgroup = process.env.BENCH_SCANNER_CGROUP;
    const [command, args] =
      cgroup === undefined
        ? [process.execPath, [entry]]
        : [
            'sh',
            ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup, process.execPath, entry],
          ];
    const child = spawn(command, args, {
      env: { ...process.env, ...env, ICEPACK_HTTP_PORT: '0', ICEPACK_HTTP_HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const scanner = new BenchScanner(child);
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        try {
          const entry = JSON.parse(line) as Record<string, unknown>;
          scanner.lines.push(entry);
          if (entry.msg === 'http server listening') scanner.port = Number(entry.port);
          if (entry.msg === 'metadata-scanner ready for work') resolve();
        } catch {
          // not JSON: ignore
        }
      });
      child.once('exit', (code) => reject(new Error(`scanner exited with ${String(code)}`)));
    });
    return scanner;
  }

  /** VmRSS of the process, in bytes. */
  rssBytes(): number {
    const status = readFileSync(`/proc/${this.child.pid!}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    return Number(kb ?? 0) * 1024;
  }

  /** User + system CPU time of the process so far, in seconds. */
  cpuSeconds(): number {
    return processCpuSeconds(this.child.pid!);
  }

  async metric(name: string, labels: Record<string, string> = {}): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${this.port}/metrics`)).text();
    let total = 0;
    for (const line of text.split('\n')) {
      if (!line.startsWith(`${name}{`)) continue;
      if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) {
        total += Number(line.slice(line.lastIndexOf(' ') + 1));
      }
    }
    return total;
  }

  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }
}

/** User + system CPU seconds of a process (Linux `/proc/<pid>/stat`, clock ticks of 1/100 s). */
export function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export async function until(
  check: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}
