import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { setTimeout } from 'node:timers/promises';

/** How often a paired file waiting for a slot looks again. */
const SLOT_POLL_MS = 1_000;

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
  const held = await lockChild(lockFile, true);
  if (held === undefined) throw new Error(`flock on ${lockFile} gave up while waiting`);
  return held;
}

/** Holds the lock on `lockFile` if it is free now; `undefined` if another process holds it. */
export function tryHoldLock(lockFile: string): Promise<HeldLock | undefined> {
  return lockChild(lockFile, false);
}

async function lockChild(lockFile: string, wait: boolean): Promise<HeldLock | undefined> {
  const child = spawn('flock', [
    wait ? '--exclusive' : '--nonblock',
    lockFile,
    'sh',
    '-c',
    'echo held; exec cat >/dev/null',
  ]);
  const held = await new Promise<boolean>((ok, fail) => {
    child.stdout.once('data', () => ok(true));
    child.once('error', fail);
    child.once('exit', (code) => {
      // flock -n exits 1 when the lock is taken.
      if (!wait && code === 1) ok(false);
      else
        fail(
          new Error(`flock on ${lockFile} ended (exit ${String(code)}) before it held the lock`),
        );
    });
  });
  if (!held) return undefined;
  return {
    async release() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.stdin.end();
      await exited;
    },
  };
}

/**
 * The two slots of the heavy integration lanes (lanes.ts), as lock files in `dir`: a `paired`
 * file holds one slot, so two of them run at once; an `exclusive` file holds both, so it runs
 * alone. Every holder enters through a gate, held only while it takes its slots: an exclusive
 * file waiting for the second slot keeps paired files from taking the first one it freed, so
 * it waits for at most the one paired file that was running.
 */
export async function holdSlots(dir: string, kind: 'paired' | 'exclusive'): Promise<HeldLock> {
  const file = (name: string): string => join(dir, `integration-lane-${name}.lock`);
  const [a, b] = [file('slot-a'), file('slot-b')];
  const gate = await holdLock(file('gate'));
  const slots: HeldLock[] = [];
  try {
    if (kind === 'exclusive') {
      slots.push(await holdLock(a));
      slots.push(await holdLock(b));
    } else {
      // Whichever slot frees first (its holder ends without the gate): a poll, as flock(1)
      // waits for one file only.
      for (;;) {
        const slot = (await tryHoldLock(a)) ?? (await tryHoldLock(b));
        if (slot !== undefined) {
          slots.push(slot);
          break;
        }
        await setTimeout(SLOT_POLL_MS);
      }
    }
  } catch (error) {
    for (const slot of slots) await slot.release();
    throw error;
  } finally {
    await gate.release();
  }
  return {
    async release() {
      for (const slot of slots) await slot.release();
    },
  };
}
