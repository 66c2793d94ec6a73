import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const jobsDir = resolve(import.meta.dirname, '..', '..', '..', '..', 'jobs', 'spark');

/**
 * The Pythons the job must run on: 3.10 is what `apache/spark:4.0.1-python3` (the job image's
 * base) ships, 3.11 what the local venv and the dispatcher-local image use.
 */
const PYTHONS = ['3.10', '3.11'] as const;

/**
 * An interpreter of that minor version: `ICEPACK_PYTHON_3_10` (…`_3_11`), else `python3.10` on
 * the PATH, else pyenv's newest `3.10.*`. Never skipped: a missing one fails with how to get it.
 */
async function pythonOf(version: string): Promise<string> {
  const pyenvRoot = process.env.PYENV_ROOT ?? join(homedir(), '.pyenv');
  let pyenv: string[] = [];
  try {
    pyenv = readdirSync(join(pyenvRoot, 'versions'))
      .filter((v) => v.startsWith(`${version}.`) && /^\d+\.\d+\.\d+$/.test(v))
      .sort((a, b) => Number(b.split('.')[2]) - Number(a.split('.')[2]))
      .map((v) => join(pyenvRoot, 'versions', v, 'bin', `python${version}`));
  } catch {
    // no pyenv
  }
  const candidates = [
    process.env[`ICEPACK_PYTHON_${version.replace('.', '_')}`],
    `python${version}`,
    ...pyenv,
  ].filter((c): c is string => c !== undefined && c !== '');
  for (const candidate of candidates) {
    try {
      const { stdout, stderr } = await run(candidate, ['--version']);
      if (`${stdout}${stderr}`.trim().startsWith(`Python ${version}.`)) return candidate;
    } catch {
      // not this one (a pyenv shim of a version that is not selected fails here)
    }
  }
  throw new Error(
    `no Python ${version} found (tried ${candidates.join(', ')}): install it ` +
      `(pyenv install ${version}) or point ICEPACK_PYTHON_${version.replace('.', '_')} at one`,
  );
}

describe('jobs/spark/icepack_job.py (pure parts, no Spark)', () => {
  it.each(PYTHONS)(
    'passes its Python unit tests under Python %s: task checks, option names, error kinds, result line',
    async (version) => {
      const python = await pythonOf(version);
      const { stderr } = await run(
        python,
        ['-m', 'unittest', 'discover', '-v', '-s', jobsDir, '-p', 'test_*.py'],
        { cwd: jobsDir },
      );
      expect(stderr).toMatch(/\nOK\s*$/);
      // The run really was that version: its own report of sys.version_info.
      const { stdout } = await run(python, ['-c', 'import sys; print(sys.version_info[:2])']);
      expect(stdout.trim()).toBe(`(${version.replace('.', ', ')})`);
    },
  );
});
