import { spawn } from 'node:child_process';
import { once } from 'node:events';

/** An exclusive lock held by a child process; `release` lets it go. */
export interface HeldLock {
  release(): Promise<void>;
}

/**
 * Waits for and holds an exclusive flock(1) on `lockFile`. A child process holds it until its
 * standard input closes: on `release`, or when this process dies, so that a crashed test
 * worker never keeps the lock.
 */
export async function holdLock(lockFile: string): Promise<HeldLock> {
  const child = spawn('flock', [
    '--exclusive',
    lockFile,
    'sh',
    '-c',
    'echo held; exec cat >/dev/null',
  ]);
  await new Promise<void>((ok, fail) => {
    child.stdout.once('data', () => ok());
    child.once('error', fail);
    child.once('exit', (code) =>
      fail(new Error(`flock on ${lockFile} ended (exit ${String(code)}) before it held the lock`)),
    );
  });
  return {
    async release() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.stdin.end();
      await exited;
    },
  };
}
