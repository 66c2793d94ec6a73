import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SecretRef } from '@icepack/types';
import type { SecretResolver } from '../domain/catalog-client-options.ts';

/** A catalog secret could not be resolved; names the reference, never a value. */
export class SecretResolutionError extends Error {
  override readonly name = 'SecretResolutionError';
}

/**
 * Resolves references from the environment, from files, and Kubernetes Secrets from where
 * the chart mounts them: `<secretsDir>/<secret name>/<key>`.
 */
export function secretResolver(
  env: NodeJS.ProcessEnv,
  secretsDir = '/var/run/secrets/icepack',
): SecretResolver {
  const read = (path: string, field: string): string => {
    try {
      return readFileSync(path, 'utf8').replace(/\r?\n$/, '');
    } catch (error) {
      throw new SecretResolutionError(
        `${field}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
      );
    }
  };
  return (ref: SecretRef, field: string): string => {
    if ('env' in ref) {
      const value = env[ref.env];
      if (value === undefined || value === '') {
        throw new SecretResolutionError(`${field}: environment variable ${ref.env} is not set`);
      }
      return value;
    }
    if ('file' in ref) return read(ref.file, field);
    return read(join(secretsDir, ref.secret.name, ref.secret.key), field);
  };
}
