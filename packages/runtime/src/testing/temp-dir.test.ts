import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, withTempDir } from './temp-dir.ts';

// The tests of a file run in order: several of these check what a test or block before left.
const PREFIX = 'icepack-temp-dir-test-';

/** Puts a nested file in `dir`, as the tests' directories hold: removal must be recursive. */
function fill(dir: string): void {
  mkdirSync(join(dir, 'nested'));
  writeFileSync(join(dir, 'nested', 'file'), 'x');
}

describe('tempDir inside a test', () => {
  let made = '';
  afterEach(() => {
    // The test's afterEach hooks still have it (one that stops a process writing there).
    if (made !== '') expect(existsSync(join(made, 'nested', 'file'))).toBe(true);
  });

  it('makes a new directory named by the prefix, there while the test runs', () => {
    made = tempDir(PREFIX);
    expect(basename(made)).toMatch(new RegExp(`^${PREFIX}[A-Za-z0-9]{6}$`));
    expect(made.startsWith(tmpdir())).toBe(true);
    fill(made);
  });

  it('has removed it, with what it held, once that test finished', () => {
    expect(made).not.toBe('');
    expect(existsSync(made)).toBe(false);
    made = '';
  });
});

describe('tempDir in a beforeEach', () => {
  const made: string[] = [];
  beforeEach(() => {
    const dir = tempDir(PREFIX);
    fill(dir);
    made.push(dir);
  });

  it('gives the test its directory', () => {
    expect(existsSync(join(made[0] ?? '', 'nested', 'file'))).toBe(true);
  });

  it('removes it when that test finished', () => {
    expect(made).toHaveLength(2);
    expect(existsSync(made[0] ?? '')).toBe(false);
    expect(existsSync(made[1] ?? '')).toBe(true);
  });
});

describe('tempDir asked for while the file is collected', () => {
  let collected = '';
  let skipped = '';
  describe('in a describe body', () => {
    collected = tempDir(PREFIX);

    it('is made for the tests of the block', () => {
      expect(basename(collected).startsWith(PREFIX)).toBe(true);
      fill(collected);
    });

    it('and kept between them', () => {
      expect(existsSync(join(collected, 'nested', 'file'))).toBe(true);
    });
  });

  // Nothing is made while the file is collected, only in the block's beforeAll: a skipped
  // block (`-t`, `.skip`), whose hooks never run, leaves nothing behind.
  describe('in the body of a block, while the file is collected', () => {
    skipped = tempDir(PREFIX);
    const madeWhenAsked = existsSync(skipped);

    it('is not made yet, so a block that never runs leaves nothing', () => {
      expect(madeWhenAsked).toBe(false);
      expect(existsSync(skipped)).toBe(true);
    });
  });

  it('is removed once its block ended', () => {
    expect(collected).not.toBe('');
    expect(existsSync(collected)).toBe(false);
  });

  it('and is removed with that block too', () => {
    expect(skipped).not.toBe('');
    expect(existsSync(skipped)).toBe(false);
  });
});

describe('tempDir in a beforeAll', () => {
  const prefix = `${PREFIX}before-all-`;
  let error: unknown;
  beforeAll(() => {
    try {
      tempDir(prefix);
    } catch (e) {
      error = e;
    }
  });

  it('throws (an afterAll registered then would never run) and makes nothing', () => {
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/beforeAll\/afterAll/);
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith(prefix))).toEqual([]);
  });
});

describe('withTempDir', () => {
  it('gives the call a directory and removes it when the call ends, with its result', async () => {
    let seen = '';
    const result = await withTempDir(PREFIX, (dir) => {
      seen = dir;
      fill(dir);
      return Promise.resolve(7);
    });
    expect(result).toBe(7);
    expect(basename(seen).startsWith(PREFIX)).toBe(true);
    expect(existsSync(seen)).toBe(false);
  });

  it('removes it also when the call fails', async () => {
    let seen = '';
    const failing = withTempDir(PREFIX, (dir) => {
      seen = dir;
      fill(dir);
      return Promise.reject(new Error('the call failed'));
    });
    await expect(failing).rejects.toThrow('the call failed');
    expect(seen).not.toBe('');
    expect(existsSync(seen)).toBe(false);
  });
});
