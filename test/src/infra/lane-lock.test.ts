import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { holdLock } from './lane-lock.ts';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const lockFile = (): string => {
  dir = mkdtempSync(join(tmpdir(), 'icepack-lane-'));
  return join(dir, 'lane.lock');
};

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
