import { join } from 'node:path';
import { REPO_ROOT, cachedTool, runTool } from './deploy-tools.ts';

/** One service of docker-compose.yml, as far as the checks read it. */
export interface ComposeService {
  readonly image?: string;
  readonly environment?: Record<string, string | null>;
  readonly build?: { readonly target?: string; readonly args?: Record<string, string> };
}

/** `docker compose config` as JSON: the file as Compose itself resolves it (anchors, merges, variables). */
export function composeConfig(): { services: Record<string, ComposeService> } {
  const dockerConfig = join(cachedTool('docker-config/cli-plugins/docker-compose'), '..', '..');
  const json = runTool(
    'docker',
    ['compose', '-f', join(REPO_ROOT, 'docker-compose.yml'), 'config', '--format', 'json'],
    {
      DOCKER_CONFIG: dockerConfig,
      ICEPACK_API_TOKEN: 'compose-check-token-0123456789',
    },
  );
  return JSON.parse(json) as { services: Record<string, ComposeService> };
}
