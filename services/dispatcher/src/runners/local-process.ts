import { readFile } from 'node:fs/promises';

/** A launched process as the run directory records it. */
export interface ProcessIdentity {
  readonly pid: number;
  /**
   * The process's start time (`/proc/<pid>/stat` field 22, clock ticks since boot): with the
   * pid, it names one process for good — it survives every `exec` of the process, and a
   * recycled pid has another. Absent in records of older dispatchers.
   */
  readonly startTicks?: number;
}

/** State and start time from `/proc/<pid>/stat`, or undefined when there is no such process. */
async function procStat(pid: number): Promise<{ state: string; startTicks: number } | undefined> {
  let text: string;
  try {
    text = await readFile(`/proc/${String(pid)}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so split after the last `)`.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const startTicks = Number(fields[19]);
  const state = fields[0];
  if (state === undefined || !Number.isSafeInteger(startTicks)) return undefined;
  return { state, startTicks };
}

/** The start time of a live process, to record at launch; undefined when it is gone already. */
export async function processStartTicks(pid: number): Promise<number | undefined> {
  const stat = await procStat(pid);
  return stat === undefined || gone(stat.state) ? undefined : stat.startTicks;
}

/** Zombie or dead: exited, not reaped yet. */
function gone(state: string): boolean {
  return state === 'Z' || state === 'X' || state === 'x';
}

/**
 * Is the recorded process still running? By pid and start time, never by command line: a
 * process's command line is empty while it `exec`s (spark-submit execs bash, then
 * spark-class, then java), so a check that read it there took a live run for ended. The
 * start time guards against pid reuse after a restart. Records without a start time (older
 * dispatchers) fall back to the command line naming `marker`.
 */
export async function processAlive(record: ProcessIdentity, marker: string): Promise<boolean> {
  const stat = await procStat(record.pid);
  if (stat === undefined || gone(stat.state)) return false;
  if (record.startTicks !== undefined) return stat.startTicks === record.startTicks;
  try {
    const cmdline = await readFile(`/proc/${String(record.pid)}/cmdline`, 'utf8');
    return cmdline.includes(marker);
  } catch {
    return false;
  }
}

/** Signals a process group (the job runs in its own session), ignoring "already gone". */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already exited.
  }
}
