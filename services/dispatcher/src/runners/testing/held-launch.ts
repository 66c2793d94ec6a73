import { chmod, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * A `spark-submit` for the local runner that holds the run at its start until the test
 * releases it, then execs the real `spark-submit` with the same arguments (same process:
 * same pid, same start time). While it holds, the process's command line does not name the
 * run directory — as every process's command line is empty while it `exec`s (spark-submit
 * execs bash, spark-class, java). This stretches that moment from microseconds to as long as
 * the test wants, so a runner that judged liveness by the command line sees it every time.
 */
export interface HeldLaunch {
  /** The `sparkSubmit` to give the runner. */
  readonly sparkSubmit: string;
  /** Lets the held run of `runDir` go on (idempotent). */
  release(runDir: string): Promise<void>;
}

/**
 * Writes the stand-in's scripts into `dir`, which must outlive every run it holds (the test's
 * `tempDir`, removed after the runs ended).
 */
export async function heldLaunch(python: string, dir: string): Promise<HeldLaunch> {
  const realSubmit = join(dirname(python), 'spark-submit');
  const hold = join(dir, 'hold.py');
  await writeFile(
    hold,
    [
      'import os, time',
      "while not os.path.exists('release'):",
      '    time.sleep(0.05)',
      "with open('held-args', 'rb') as f:",
      "    args = [a.decode() for a in f.read().split(b'\\0')[:-1]]",
      `os.execv(${JSON.stringify(realSubmit)}, [${JSON.stringify(realSubmit)}] + args)`,
      '',
    ].join('\n'),
  );
  const sparkSubmit = join(dir, 'spark-submit');
  // The runner starts it in the run directory: the arguments wait there.
  await writeFile(
    sparkSubmit,
    `#!/usr/bin/env bash\nprintf '%s\\0' "$@" > held-args\nexec ${JSON.stringify(python)} ${JSON.stringify(hold)}\n`,
  );
  await chmod(sparkSubmit, 0o755);
  return {
    sparkSubmit,
    release: (runDir) => writeFile(join(runDir, 'release'), ''),
  };
}
