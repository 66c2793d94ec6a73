// Temporary directories for tests that remove themselves: the one home of the concept. It lives
// here, not in @icepack/test, so that @icepack/runtime's own tests can use it (@icepack/test
// depends on this package; the other way round would be a workspace cycle); @icepack/test
// re-exports it for every other package.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, onTestFinished, TestRunner } from 'vitest';

/**
 * A new directory `<tmpdir>/<prefix><random>`, removed with all it holds when what needs it ends:
 * - asked for inside a test (or its `beforeEach`/`afterEach`): made at once, removed when that
 *   test has finished, after its `afterEach` hooks;
 * - asked for while Vitest collects the file (at module level or in a `describe` body): named
 *   at once, made in a `beforeAll` and removed in an `afterAll` of that file or block, so a
 *   skipped block (`-t`, `.skip`) leaves nothing; the tests and hooks have it, the collecting
 *   code itself not yet. Vitest runs a block's `afterAll` hooks last registered first: a
 *   directory asked for above the `afterAll` that stops the processes writing into it is
 *   removed after they stopped.
 *
 * Inside `beforeAll`/`afterAll` it throws: collection is over, an `afterAll` registered then
 * would silently never run. Ask at module or `describe` level instead, or use `withTempDir` for
 * a directory only one call needs.
 */
export function tempDir(prefix: string): string {
  if (TestRunner.getCurrentTest() !== undefined) {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    onTestFinished(() => remove(dir));
    return dir;
  }
  // Vitest stamps a file's collect duration once it has collected the file.
  if (TestRunner.getCurrentSuite().file?.collectDuration !== undefined)
    throw new Error(
      'tempDir() outside a test and after collection (in beforeAll/afterAll): its removal could ' +
        'not be registered; ask at module or describe level, in the test, or use withTempDir()',
    );
  const dir = join(tmpdir(), `${prefix}${randomBytes(6).toString('hex')}`);
  // Not recursive: a name taken meanwhile fails here instead of being shared.
  beforeAll(() => {
    mkdirSync(dir, { mode: 0o700 });
  });
  afterAll(() => remove(dir));
  return dir;
}

/** A new directory `<tmpdir>/<prefix><random>` for the duration of `use`; removed when it ends. */
export async function withTempDir<T>(prefix: string, use: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  try {
    return await use(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function remove(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
