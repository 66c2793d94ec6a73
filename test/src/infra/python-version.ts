import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The Pythons the Spark job must run on: 3.10 is what `apache/spark:4.0.1-python3` (the job
 * image's base) ships, 3.11 what the local venv and the dispatcher-local image use.
 */
export const JOB_PYTHON_VERSIONS = ['3.10', '3.11'] as const;

/**
 * An interpreter of a minor version (`3.10`): `ICEPACK_PYTHON_3_10`, else `python3.10` on the
 * PATH, else pyenv's newest `3.10.*`. Never a silent skip: a missing one rejects with how to
 * get it.
 */
export async function pythonOfVersion(version: string): Promise<string> {
  const variable = `ICEPACK_PYTHON_${version.replace('.', '_')}`;
  const pyenvRoot = process.env.PYENV_ROOT ?? join(homedir(), '.pyenv');
  let pyenv: string[] = [];
  try {
    pyenv = readdirSync(join(pyenvRoot, 'versions'))
      .filter((v) => v.startsWith(`${version}.`) && /^\d+\.\d+\.\d+$/.test(v))
      .sort((a, b) => Number(b.split('.')[2]) - Number(a.split('.')[2]))
      .map((v) => join(pyenvRoot, 'versions', v, 'bin', `python${version}`));
  } catch {
    // no pyenv here
  }
  const candidates = [process.env[variable], `python${version}`, ...pyenv].filter(
    (c): c is string => c !== undefined && c !== '',
  );
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
      `(pyenv install ${version}) or point ${variable} at one`,
  );
}
