import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { infraEnv } from '../infra/env.ts';

/** The repository root. */
export const REPO_ROOT = resolve(import.meta.dirname, '..', '..', '..');
export const CHART_DIR = join(REPO_ROOT, 'deploy', 'helm', 'icepack');
export const SCENARIO_DIR = join(REPO_ROOT, 'deploy', 'checks', 'values');

/** A deployment-check tool that deploy/checks/run.sh has not installed. */
export class DeployToolMissingError extends Error {
  override readonly name = 'DeployToolMissingError';
}

/**
 * Path of a tool deploy/checks/run.sh installs into the cache. Missing → an error, never a
 * skip: `./dev test` runs the check script (which installs it) before the tests.
 */
export function cachedTool(relativePath: string): string {
  const path = join(infraEnv().cacheDir, relativePath);
  if (!existsSync(path)) {
    throw new DeployToolMissingError(
      `${path} is missing: run deploy/checks/run.sh (./dev test does) to install the deployment-check tools`,
    );
  }
  return path;
}

export function runTool(
  file: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): string {
  return execFileSync(file, args, {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
