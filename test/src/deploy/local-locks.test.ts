// The local scripts' locks (deploy/local/lib.sh `lock`) are flock(1)s on inherited file
// descriptors. A script that starts another service script while holding one must not hand the
// descriptor to the daemon that script starts, or the lock is held for the daemon's whole life:
// that is how moto, started by oauth-catalog.sh under its install lock, made every later
// `oauth-catalog.sh up` wait forever (CI rehearsal, session 11).
import { execFileSync, spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { tempDir } from '@icepack/runtime/testing';
import { afterEach, describe, expect, it } from 'vitest';

const lib = resolve(import.meta.dirname, '../../../deploy/local/lib.sh');

let dir = '';
afterEach(() => {
  // The stand-in daemon records its pid; stop it so nothing outlives the test (its directory
  // goes once the test has finished, after this hook).
  spawnSync('bash', [
    '-c',
    `[[ -f ${dir}/daemon.pid ]] && kill "$(cat ${dir}/daemon.pid)" || true`,
  ]);
});

/** Takes the lock, starts a long-lived background child (through `unlocked` or not), exits;
 * then reports whether the lock is free. */
function lockFreeAfterChild(viaUnlocked: boolean): boolean {
  dir = tempDir('icepack-locks-');
  const start = `bash -c 'sleep 60 >/dev/null 2>&1 & echo $! > ${dir}/daemon.pid'`;
  execFileSync('bash', [
    '-c',
    `source ${lib}; lock ${dir}/x.lock; ${viaUnlocked ? 'unlocked ' : ''}${start}`,
  ]);
  return spawnSync('flock', ['-n', join(dir, 'x.lock'), 'true']).status === 0;
}

describe('deploy/local/lib.sh locks', () => {
  it('a daemon started through `unlocked` does not keep the caller’s lock', () => {
    expect(lockFreeAfterChild(true)).toBe(true);
  });

  it('without `unlocked` the daemon would keep it (what the fix is for)', () => {
    expect(lockFreeAfterChild(false)).toBe(false);
  });
});
