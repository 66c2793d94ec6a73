import { readFileSync, realpathSync } from 'node:fs';
import type { SecretRef } from '@icepack/types';
import type { CatalogAccessPolicy } from './catalog-access-policy.ts';
import { isInside, secretRefPath, secretRefProblem } from './catalog-access-policy.ts';

/** A catalog secret could not be resolved; names the reference, never a value. */
export class SecretResolutionError extends Error {
  override readonly name = 'SecretResolutionError';
}

/** Turns a secret reference into its value; throws naming the field when it cannot. */
export type SecretResolver = (ref: SecretRef, field: string) => string;

/**
 * Resolves references from the allowed sources only: environment variables with the
 * policy's prefix, files under the secrets directory (after `realpath`, so a symlink that
 * leaves it is refused), Kubernetes Secrets where the chart mounts them
 * (`<secretsDir>/<name>/<key>`).
 */
export function secretResolver(
  env: NodeJS.ProcessEnv,
  policy: CatalogAccessPolicy,
): SecretResolver {
  return (ref, field) => {
    const problem = secretRefProblem(ref, policy);
    if (problem !== undefined) throw new SecretResolutionError(`${field}: ${problem}`);
    const path = secretRefPath(ref, policy);
    if (path === undefined) {
      const name = (ref as { env: string }).env;
      const value = env[name];
      if (value === undefined || value === '') {
        throw new SecretResolutionError(`${field}: environment variable ${name} is not set`);
      }
      return value;
    }
    let real: string;
    let dir: string;
    try {
      real = realpathSync(path);
      dir = realpathSync(policy.secretsDir);
    } catch (error) {
      throw new SecretResolutionError(
        `${field}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
      );
    }
    if (!isInside(dir, real)) {
      throw new SecretResolutionError(
        `${field}: ${path} leads outside the secrets directory ${policy.secretsDir}`,
      );
    }
    try {
      return readFileSync(real, 'utf8').replace(/\r?\n$/, '');
    } catch (error) {
      throw new SecretResolutionError(
        `${field}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
      );
    }
  };
}
