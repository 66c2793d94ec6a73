import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

// `./dev down` runs `services.sh stop`: with no service named it also stops the local Spark
// runs, which run detached so that a restarted dispatcher can re-attach to them.

const services = join(import.meta.dirname, '..', '..', '..', 'deploy', 'local', 'services.sh');
const children: ChildProcess[] = [];
let stateDir: string | undefined;

/** A stand-in for a detached spark-submit: its own session, the run dir on its command line. */
async function detachedRun(runDir: string, cmdlineMentions: string): Promise<ChildProcess> {
  await mkdir(runDir, { recursive: true });
  // `; :` keeps bash from exec-ing sleep: the group has two processes, like spark-submit's.
  const child = spawn('bash', ['-c', 'sleep 300; :', cmdlineMentions], {
    detached: true,
    stdio: 'ignore',
  });
  await once(child, 'spawn');
  children.push(child);
  await writeFile(join(runDir, 'pid'), JSON.stringify({ pid: child.pid, startedAt: Date.now() }));
  return child;
}

const alive = (child: ChildProcess): boolean =>
  child.exitCode === null && child.signalCode === null;

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (alive(child)) process.kill(-child.pid!, 'SIGKILL');
  }
  if (stateDir !== undefined) await rm(stateDir, { recursive: true, force: true });
});

describe('services.sh stop (./dev down)', () => {
  it('stops the local Spark runs of the dispatcher’s state directory, and only them', async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'icepack-dev-down-'));
    const runs = join(stateDir, 'dispatcher');
    const run = await detachedRun(join(runs, 'abc-a1'), join(runs, 'abc-a1'));
    // A pid file whose process is not that run any more (a reused pid): left alone.
    const stranger = await detachedRun(join(runs, 'def-a1'), '/somewhere/else');
    const exited = once(run, 'exit');

    const env: NodeJS.ProcessEnv = { ...process.env, ICEPACK_RUN: stateDir };
    delete env.ICEPACK_DISPATCHER_STATE_DIR;
    const { stderr } = await promisify(execFile)('bash', [services, 'stop'], { env });

    expect(await exited).toEqual([null, 'SIGTERM']);
    expect(stderr).toContain('stopped 1 Spark run(s)');
    expect(alive(stranger)).toBe(true);
  });
});
