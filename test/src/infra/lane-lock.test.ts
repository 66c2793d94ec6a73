import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { tempDir } from '@icepack/runtime/testing';
import { describe, expect, it } from 'vitest';
import { holdLock, holdSlots, tryHoldLock, type HeldLock } from './lane-lock.ts';

const lockFile = (): string => join(tempDir('icepack-lane-'), 'lane.lock');

/** Whether another process could take the lock right now. */
const free = (file: string): boolean => spawnSync('flock', ['-n', file, 'true']).status === 0;

describe('holdLock', () => {
  it('holds the lock against other processes until released', async () => {
    const file = lockFile();
    const held = await holdLock(file);
    expect(free(file)).toBe(false);
    await held.release();
    expect(free(file)).toBe(true);
  });

  it('gives the lock to a second holder only once the first released it', async () => {
    const file = lockFile();
    const first = await holdLock(file);
    let firstReleased = false;
    const second = holdLock(file).then((held) => ({ held, afterRelease: firstReleased }));
    // The second waits in flock(1) while the first holds the lock: given time to take it, it
    // has not (a broken lock would have resolved meanwhile, before the release).
    await setTimeout(1_000);
    expect(free(file)).toBe(false);
    firstReleased = true;
    await first.release();
    const { held, afterRelease } = await second;
    expect(afterRelease).toBe(true);
    expect(free(file)).toBe(false);
    await held.release();
    expect(free(file)).toBe(true);
  });

  it('lets the lock go when the process that held it dies (a crashed test worker)', async () => {
    const file = lockFile();
    const module = resolve(import.meta.dirname, 'lane-lock.ts');
    const worker = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { holdLock } = await import(${JSON.stringify(module)});
         await holdLock(${JSON.stringify(file)});
         console.log('held');
         setInterval(() => {}, 60_000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await once(worker.stdout, 'data');
    expect(free(file)).toBe(false);
    worker.kill('SIGKILL');
    await once(worker, 'exit');
    // Its flock child sees its standard input close and exits.
    for (let i = 0; i < 100 && !free(file); i++) await setTimeout(100);
    expect(free(file)).toBe(true);
  });
});

describe('tryHoldLock', () => {
  it('holds a free lock, and gives up at once on a held one', async () => {
    const file = lockFile();
    const held = await tryHoldLock(file);
    expect(held).toBeDefined();
    expect(await tryHoldLock(file)).toBeUndefined();
    await held!.release();
    expect(free(file)).toBe(true);
  });
});

describe('holdSlots', () => {
  /** Resolves to the holder once it holds its slots; `entered()` says whether it did yet. */
  function enter(dir: string, kind: 'paired' | 'exclusive') {
    let held: HeldLock | undefined;
    const holding = holdSlots(dir, kind).then((h) => (held = h));
    return { holding, entered: () => held !== undefined };
  }

  it('runs two paired holders at once, and a third once either of them left', async () => {
    const dir = tempDir('icepack-lane-');
    const first = await holdSlots(dir, 'paired');
    const second = await holdSlots(dir, 'paired');
    // Whichever leaves: the second one first (the slot a later holder tries last), then the first.
    const third = enter(dir, 'paired');
    await setTimeout(1_500);
    expect(third.entered()).toBe(false);
    await second.release();
    const thirdHeld = await third.holding;
    const fourth = enter(dir, 'paired');
    await setTimeout(1_500);
    expect(fourth.entered()).toBe(false);
    await first.release();
    await (await fourth.holding).release();
    await thirdHeld.release();
  }, 15_000);

  it('runs an exclusive holder alone: after the paired ones, and before any paired one that came after it', async () => {
    const dir = tempDir('icepack-lane-');
    const a = await holdSlots(dir, 'paired');
    const b = await holdSlots(dir, 'paired');
    const exclusive = enter(dir, 'exclusive');
    await setTimeout(500);
    const later = enter(dir, 'paired');
    await a.release();
    // One slot is free, but the exclusive holder waits for the other one at the gate, and the
    // later paired holder waits behind it.
    await setTimeout(1_000);
    expect(exclusive.entered()).toBe(false);
    expect(later.entered()).toBe(false);
    await b.release();
    const held = await exclusive.holding;
    await setTimeout(1_000);
    expect(later.entered()).toBe(false);
    await held.release();
    await (await later.holding).release();
  }, 15_000);

  it('lets the first slot go when an exclusive holder cannot take the second', async () => {
    const dir = tempDir('icepack-lane-');
    // A lock file flock(1) cannot open: a link into a directory that does not exist.
    symlinkSync(join(dir, 'missing', 'slot-b'), join(dir, 'integration-lane-slot-b.lock'));
    await expect(holdSlots(dir, 'exclusive')).rejects.toThrow(/before it held the lock/);
    expect(free(join(dir, 'integration-lane-slot-a.lock'))).toBe(true);
    expect(free(join(dir, 'integration-lane-gate.lock'))).toBe(true);
  });
});
