import { configSchema as dispatcherConfig } from '@icepack/dispatcher/config';
import { configSchema as scannerConfig } from '@icepack/metadata-scanner/config';
import { configSchema as plannerConfig } from '@icepack/planner/config';
import { configSchema as provisionerConfig, parseBootstrap } from '@icepack/provisioner/config';
import { loadConfig } from '@icepack/runtime';
import { REPO_ROOT, composeConfig } from '@icepack/test/deploy';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';

const SCHEMAS: Record<string, z.ZodObject> = {
  provisioner: provisionerConfig,
  'metadata-scanner': scannerConfig,
  planner: plannerConfig,
  dispatcher: dispatcherConfig,
};

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
