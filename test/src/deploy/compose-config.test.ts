import { loadConfig } from '@icepack/runtime';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { configSchema as dispatcherConfig } from '../../../services/dispatcher/src/config.ts';
import { configSchema as scannerConfig } from '../../../services/metadata-scanner/src/config.ts';
import { configSchema as plannerConfig } from '../../../services/planner/src/config.ts';
import { configSchema as provisionerConfig } from '../../../services/provisioner/src/config.ts';
import { parseBootstrap } from '../../../services/provisioner/src/domain/bootstrap-file.ts';
import { REPO_ROOT, cachedTool, runTool } from './deploy-tools.ts';

interface ComposeService {
  readonly image?: string;
  readonly environment?: Record<string, string | null>;
  readonly build?: { readonly target?: string; readonly args?: Record<string, string> };
}

const SCHEMAS: Record<string, z.ZodObject> = {
  provisioner: provisionerConfig,
  'metadata-scanner': scannerConfig,
  planner: plannerConfig,
  dispatcher: dispatcherConfig,
};

/** `docker compose config` as JSON: the file as Compose itself resolves it (anchors, merges, variables). */
function composeConfig(): { services: Record<string, ComposeService> } {
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

describe('docker-compose.yml', () => {
  const config = composeConfig();

  it('runs the full stack: Kafka, Redis, an S3 store, the REST catalog and the four services', () => {
    expect(Object.keys(config.services).sort()).toEqual(
      [
        'dispatcher',
        'iceberg-rest',
        'kafka',
        'metadata-scanner',
        'planner',
        'provisioner',
        'redis',
        's3',
        's3-init',
      ].sort(),
    );
    expect(config.services.kafka?.image).toMatch(/^apache\/kafka:4\./);
    expect(config.services['iceberg-rest']?.image).toMatch(/^apache\/iceberg-rest-fixture:/);
  });

  it('gives each service a configuration it accepts, and the dispatcher the local runner with Spark inside', () => {
    for (const [service, schema] of Object.entries(SCHEMAS)) {
      const env = Object.fromEntries(
        Object.entries(config.services[service]?.environment ?? {}).map(([k, v]) => [k, v ?? '']),
      );
      expect(() => loadConfig(schema, env), service).not.toThrow();
      const unknown = Object.keys(env).filter(
        (name) => name.startsWith('ICEPACK_') && !(name in schema.shape),
      );
      expect(unknown, `${service} ignores these variables`).toEqual([]);
      expect(config.services[service]?.build?.args?.SERVICE, service).toBe(service);
    }
    expect(config.services.dispatcher?.environment?.ICEPACK_DISPATCHER_STATE_DIR).toBe(
      '/var/lib/icepack/runs',
    );
    expect(config.services.dispatcher?.build?.target).toBe('dispatcher-local');
    expect(config.services.provisioner?.environment?.ICEPACK_PROVISIONER_MODE).toBe('local');
  });

  it('starts with a catalog and resource group the provisioner accepts', () => {
    const text = readFileSync(
      join(REPO_ROOT, 'deploy', 'docker', 'compose-bootstrap.yaml'),
      'utf8',
    );
    const { catalogs, groups } = parseBootstrap(text, 'compose-bootstrap.yaml');
    expect(catalogs.map((c) => c.uri)).toEqual(['http://iceberg-rest:8181']);
    expect(groups.map((g) => g.catalog)).toEqual(['demo']);
  });
});
