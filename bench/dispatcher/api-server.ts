import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { infraEnv } from '@icepack/test';
import { machine } from '../iceberg/machine.ts';

/** The pid of a process of the local control plane (`deploy/local/k8s.sh` writes them). */
export function controlPlanePid(component: string): number {
  const file = resolve(infraEnv().runDir, 'k8s', `${component}.pid`);
  return Number(readFileSync(file, 'utf8').trim());
}

/** CPU time (user + system) of process `pid` so far, ms, from /proc (Linux); NaN if gone. */
export function processCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${String(pid)}/stat`, 'utf8')
      .split(') ')[1]
      ?.split(' ');
    // utime and stime, fields 14 and 15 of stat: in clock ticks (100 per second on Linux).
    return (Number(fields?.[11]) + Number(fields?.[12])) * 10;
  } catch {
    return NaN;
  }
}

/** The machine and its load at the end of a run, as a fenced block for a results file. */
export function machineBlock(): string[] {
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ');
  return ['```', machine(), `load average (1/5/15 min) at the end: ${load}`, '```'];
}
