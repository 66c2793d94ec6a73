// The services' own configuration schemas: the chart must give each service a configuration
// it accepts, and set no variable it does not read.
import { configSchema as dispatcherConfig } from '@icepack/dispatcher/config';
import { configSchema as scannerConfig } from '@icepack/metadata-scanner/config';
import { configSchema as plannerConfig } from '@icepack/planner/config';
import { configSchema as provisionerConfig } from '@icepack/provisioner/config';
import { DEFAULT_SECRET_ENV_PREFIX, loadConfig } from '@icepack/runtime';
import { ofKind, renderChart } from '@icepack/test/deploy';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { deploymentEnvironments } from './service-env.ts';

const SCHEMAS: Record<string, z.ZodObject> = {
  'icepack-provisioner': provisionerConfig,
  'icepack-metadata-scanner': scannerConfig,
  'icepack-planner': plannerConfig,
  'icepack-dispatcher': dispatcherConfig,
};

describe('each service accepts the configuration the chart gives it', () => {
  for (const scenario of ['default', 'full', 'escalate', 'local']) {
    it(`with values "${scenario}"`, () => {
      const environments = deploymentEnvironments(renderChart(scenario));
      expect([...environments.keys()].sort()).toEqual(Object.keys(SCHEMAS).sort());
      for (const [deployment, env] of environments) {
        const schema = SCHEMAS[deployment];
        if (schema === undefined) throw new Error(`unexpected Deployment ${deployment}`);
        // Throws a ConfigError naming every missing or invalid variable.
        expect(() => loadConfig(schema, env), deployment).not.toThrow();
        // Catalog credentials (`ICEPACK_SECRET_*`) are read by reference, not as settings.
        const unknown = Object.keys(env).filter(
          (name) =>
            name.startsWith('ICEPACK_') &&
            !name.startsWith(DEFAULT_SECRET_ENV_PREFIX) &&
            !(name in schema.shape),
        );
        expect(unknown, `${deployment} ignores these variables`).toEqual([]);
      }
    });
  }

  it('gives the Spark settings allow-list to the services that check it, and local catalogs to the ones that read files', () => {
    const full = deploymentEnvironments(renderChart('full'));
    for (const deployment of ['icepack-provisioner', 'icepack-dispatcher']) {
      const config: Record<string, unknown> = loadConfig(
        SCHEMAS[deployment]!,
        full.get(deployment) ?? {},
      );
      expect(config.ICEPACK_SPARK_CONF_ALLOW, deployment).toEqual([
        'spark.sql.shuffle.partitions',
        'spark.sql.adaptive.*',
      ]);
      expect(config.ICEPACK_SPARK_IMAGE_REGISTRIES, deployment).toEqual([
        'registry.example.com/data/icepack',
      ]);
    }
    // Only the services that read table files know local catalogs (the provisioner's probe
    // reads none).
    expect(
      Object.entries(SCHEMAS)
        .filter(([, schema]) => 'ICEPACK_LOCAL_CATALOGS' in schema.shape)
        .map(([deployment]) => deployment),
    ).toEqual(['icepack-metadata-scanner', 'icepack-dispatcher']);
    // Nothing is local unless asked: a catalog could otherwise name any path of the pod.
    for (const env of full.values()) expect(env.ICEPACK_LOCAL_CATALOGS).toBeUndefined();
    const local = deploymentEnvironments(renderChart('local'));
    expect(
      [...local].filter(([, env]) => env.ICEPACK_LOCAL_CATALOGS === 'lake').map(([d]) => d),
    ).toEqual(['icepack-metadata-scanner', 'icepack-dispatcher']);
  });

  it('passes a typo in a service setting through to a failing check', () => {
    const env = deploymentEnvironments(
      renderChart('default', ['planner.config.ICEPACK_PLANNER_CONCURENCY=4']),
    );
    const planner = env.get('icepack-planner') ?? {};
    expect(
      Object.keys(planner).filter(
        (name) => name.startsWith('ICEPACK_') && !(name in plannerConfig.shape),
      ),
    ).toEqual(['ICEPACK_PLANNER_CONCURENCY']);
  });
});

describe('the Secret the chart creates', () => {
  it('holds a Redis URL whose password survives URL parsing, whatever its characters', () => {
    const secret = ofKind(renderChart('escalate'), 'Secret')[0];
    const data = (secret?.data ?? {}) as Record<string, string>;
    const url = new URL(Buffer.from(data['redis-url'] ?? '', 'base64').toString('utf8'));
    expect(decodeURIComponent(url.password)).toBe('s3cret/with:odd@chars');
    expect([url.protocol, url.hostname, url.port, url.pathname]).toEqual([
      'redis:',
      'redis',
      '6379',
      '/0',
    ]);
    expect(Buffer.from(data['api-token'] ?? '', 'base64').toString('utf8')).toBe(
      'a-token-of-at-least-16-chars',
    );
  });

  it('generates an API token when none is given', () => {
    const data = (ofKind(renderChart(), 'Secret')[0]?.data ?? {}) as Record<string, string>;
    expect(Buffer.from(data['api-token'] ?? '', 'base64').toString('utf8')).toMatch(
      /^[A-Za-z0-9]{40}$/,
    );
  });
});
