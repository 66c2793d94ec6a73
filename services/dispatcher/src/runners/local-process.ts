import { readFile } from 'node:fs/promises';

/**
 * Is `pid` a live process whose command line mentions `marker`? Guards against pid reuse
 * after a restart: an unrelated process with a recycled pid does not mention our run dir.
 * Zombies have an empty command line, so they count as gone.
 */
export async function processAlive(pid: number, marker: string): Promise<boolean> {
  try {
    const cmdline = await readFile(`/proc/${String(pid)}/cmdline`, 'utf8');
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
