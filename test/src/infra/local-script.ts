import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const repoRoot = resolve(import.meta.dirname, '..', '..', '..');

export interface LocalScriptResult {
  /** Exit code; null when killed by a signal. */
  readonly code: number | null;
  /** stdout and stderr, interleaved as they came. */
  readonly output: string;
}

/**
 * Runs `deploy/local/<script> <args…>` from the repository root (the local stack's service
 * scripts) with `env` over this process's environment; resolves with its exit code and output
 * — the caller decides what a failure means.
 */
export function runLocalScript(
  script: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<LocalScriptResult> {
  return new Promise((done, fail) => {
    const child = spawn('bash', [resolve(repoRoot, 'deploy', 'local', script), ...args], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, output }));
  });
}

/** `runLocalScript`, throwing its output when it exits other than 0. */
export async function runLocalScriptOrThrow(
  script: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<void> {
  const { code, output } = await runLocalScript(script, args, env);
  if (code !== 0)
    throw new Error(`deploy/local/${script} ${args.join(' ')} exited ${String(code)}:\n${output}`);
}
