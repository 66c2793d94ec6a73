import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './deploy-tools.ts';

/** The local stack's embedded configuration, which services.sh gives every service. */
export const LOCAL_ENV_FILE = join(REPO_ROOT, 'deploy', 'local', 'icepack.env');

/** The variables deploy/local/icepack.env sets, in its order. */
export function localEnvNames(): string[] {
  return readFileSync(LOCAL_ENV_FILE, 'utf8')
    .split('\n')
    .map((line) => /^([A-Z][A-Z0-9_]*)=/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
}
