import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const jobsDir = resolve(import.meta.dirname, '..', '..', '..', '..', 'jobs', 'spark');

describe('jobs/spark/icepack_job.py (pure parts, no Spark)', () => {
  it('passes its Python unit tests: task checks, option names, error kinds, result line', async () => {
    const { stderr } = await promisify(execFile)(
      'python3',
      ['-m', 'unittest', 'discover', '-s', jobsDir, '-p', 'test_*.py'],
      { cwd: jobsDir },
    );
    expect(stderr).toMatch(/\nOK\s*$/);
  });
});
