import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../testing/temp-dir.ts';
import { SecretResolutionError, secretResolver } from './secret-resolver.ts';

function setup() {
  const secretsDir = tempDir('icepack-secrets-');
  const outside = tempDir('icepack-outside-');
  writeFileSync(join(outside, 'token'), 'outside-value\n');
  mkdirSync(join(secretsDir, 'lake'));
  writeFileSync(join(secretsDir, 'lake', 'token'), 'lake-token\n');
  writeFileSync(join(secretsDir, 'plain'), 'plain-value');
  symlinkSync(join(outside, 'token'), join(secretsDir, 'lake', 'escape'));
  symlinkSync(outside, join(secretsDir, 'linked-dir'));
  symlinkSync(join(secretsDir, 'lake', 'token'), join(secretsDir, 'lake', 'alias'));
  const resolve = secretResolver(
    { ICEPACK_SECRET_LAKE: 'env-value', ICEPACK_REDIS_URL: 'redis://:pw@redis' },
    { secretEnvPrefix: 'ICEPACK_SECRET_', secretsDir, allowLinkLocal: false },
  );
  return { resolve, secretsDir, outside };
}

describe('secretResolver', () => {
  it('resolves allowed variables, files and Secrets, without the trailing newline', () => {
    const { resolve, secretsDir } = setup();
    expect(resolve({ env: 'ICEPACK_SECRET_LAKE' }, 'auth.token')).toBe('env-value');
    expect(resolve({ file: join(secretsDir, 'plain') }, 'auth.token')).toBe('plain-value');
    expect(resolve({ secret: { name: 'lake', key: 'token' } }, 'auth.token')).toBe('lake-token');
    // A symlink that stays inside the directory is fine (Kubernetes mounts Secrets that way).
    expect(resolve({ secret: { name: 'lake', key: 'alias' } }, 'auth.token')).toBe('lake-token');
  });

  it.each([
    [
      { env: 'ICEPACK_REDIS_URL' },
      /auth\.token: environment variable ICEPACK_REDIS_URL is not allowed/,
    ],
    [{ env: 'ICEPACK_SECRET_MISSING' }, /not set/],
    [{ secret: { name: 'lake', key: 'escape' } }, /leads outside the secrets directory/],
    [{ secret: { name: 'linked-dir', key: 'token' } }, /leads outside the secrets directory/],
    [{ secret: { name: '..', key: 'x' } }, /outside the secrets directory/],
    [{ secret: { name: 'lake', key: 'missing' } }, /cannot read .*ENOENT/],
  ])('refuses %j, naming the field and never a value', (ref, message) => {
    const { resolve } = setup();
    let error: unknown;
    try {
      resolve(ref, 'auth.token');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SecretResolutionError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toMatch(/outside-value|redis:\/\/|pw/);
  });

  it('refuses files outside the directory, by path and through a symlink', () => {
    const { resolve, outside, secretsDir } = setup();
    expect(() => resolve({ file: join(outside, 'token') }, 'auth.token')).toThrow(/outside/);
    expect(() => resolve({ file: join(secretsDir, 'linked-dir', 'token') }, 'auth.token')).toThrow(
      /leads outside/,
    );
  });
});
