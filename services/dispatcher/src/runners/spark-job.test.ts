import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { JOB_PYTHON_VERSIONS, pythonOfVersion } from '@icepack/test';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const jobsDir = resolve(import.meta.dirname, '..', '..', '..', '..', 'jobs', 'spark');

describe('jobs/spark/icepack_job.py (pure parts, no Spark)', () => {
  it.each(JOB_PYTHON_VERSIONS)(
    'passes its Python unit tests under Python %s: task checks, option names, error kinds, result line',
    async (version) => {
      const python = await pythonOfVersion(version);
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
    60_000, // a bound for a loaded machine: two interpreters start, the suite runs
  );
});
