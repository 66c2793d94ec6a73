import { describe, expect, it } from 'vitest';
import { createLogger } from '@icepack/runtime';
import { sampleBinding, type Binding, type Catalog } from '@icepack/types';
import { BindingRegistry, type CatalogWorker } from './binding-registry.ts';

const logger = createLogger({ service: 'test', level: 'silent' });

function setup(catalogs?: string[]) {
  const log: string[] = [];
  const registry = new BindingRegistry({
    logger,
    ...(catalogs ? { catalogs } : {}),
    create: (binding): CatalogWorker => ({
      start: () =>
        Promise.resolve(void log.push(`start ${binding.catalog} slots=${String(binding.slots)}`)),
      close: () => Promise.resolve(void log.push(`close ${binding.catalog}`)),
    }),
  });
  return { registry, log };
}

const catalog = (name: string): Catalog => ({
  name,
  type: 'rest',
  uri: 'http://catalog:8181',
  auth: { type: 'none' },
  properties: {},
});
const binding = (name: string, overrides: Partial<Binding> = {}): Binding => ({
  ...sampleBinding(),
  catalog: name,
  ...overrides,
});

describe('BindingRegistry', () => {
  it('starts no worker for a binding whose Spark settings are not allowed (a forged BindingUpdated)', async () => {
    const { registry, log } = setup();
    await registry.setCatalog('prod', catalog('prod'));
    await registry.setBinding('prod', binding('prod'));
    expect(log).toEqual(['start prod slots=2']);
    const spark = sampleBinding().spark;
    // The running worker stops: its tasks wait in the queue, nothing runs with the forged conf.
    await registry.setBinding(
      'prod',
      binding('prod', {
        spark: {
          ...spark,
          sparkConf: { 'spark.kubernetes.driver.volumes.hostPath.r.mount.path': '/' },
        },
      }),
    );
    await registry.setBinding(
      'prod',
      binding('prod', { spark: { ...spark, image: 'evil.example/x:1' } }),
    );
    expect(log).toEqual(['start prod slots=2', 'close prod']);
    expect(registry.active).toEqual([]);
    // The provisioner's binding again: dispatch resumes.
    await registry.setBinding('prod', binding('prod'));
    expect(log).toEqual(['start prod slots=2', 'close prod', 'start prod slots=2']);
  });

  it('starts no worker for a catalog on a metadata address or with a foreign secret source (a forged CatalogDefined)', async () => {
    const { registry, log } = setup();
    await registry.setBinding('prod', binding('prod'));
    await registry.setCatalog('prod', catalog('prod'));
    expect(log).toEqual(['start prod slots=2']);
    // The scanner refuses these; the worker would launch jobs at them with the credential.
    await registry.setCatalog('prod', { ...catalog('prod'), uri: 'http://169.254.169.254/' });
    await registry.setCatalog('prod', {
      ...catalog('prod'),
      properties: { 'oauth2-server-uri': 'http://[::ffff:a9fe:a9fe]/token' },
    });
    await registry.setCatalog('prod', {
      ...catalog('prod'),
      auth: {
        type: 'bearer',
        token: { file: '/var/run/secrets/kubernetes.io/serviceaccount/token' },
      },
    });
    expect(log).toEqual(['start prod slots=2', 'close prod']);
    expect(registry.active).toEqual([]);
    await registry.setCatalog('prod', catalog('prod'));
    expect(log).toEqual(['start prod slots=2', 'close prod', 'start prod slots=2']);
  });

  it('starts a worker once both the catalog and a ready binding are known', async () => {
    const { registry, log } = setup();
    await registry.setBinding('prod', binding('prod', { slots: 2 }));
    expect(log).toEqual([]);
    await registry.setCatalog('prod', catalog('prod'));
    expect(log).toEqual(['start prod slots=2']);
    expect(registry.active).toEqual(['prod']);
  });

  it('restarts on a changed binding, ignores a re-published identical one', async () => {
    const { registry, log } = setup();
    await registry.setCatalog('prod', catalog('prod'));
    await registry.setBinding('prod', binding('prod', { slots: 2 }));
    await registry.setBinding(
      'prod',
      binding('prod', { slots: 2, updatedAt: '2027-01-01T00:00:00Z' }),
    );
    await registry.setBinding('prod', binding('prod', { slots: 5 }));
    expect(log).toEqual(['start prod slots=2', 'close prod', 'start prod slots=5']);
  });

  it('stops the worker when the binding drains or is removed', async () => {
    const { registry, log } = setup();
    await registry.setCatalog('a', catalog('a'));
    await registry.setBinding('a', binding('a'));
    await registry.setBinding('a', binding('a', { state: 'draining' }));
    expect(log.at(-1)).toBe('close a');
    await registry.setBinding('a', binding('a'));
    await registry.setBinding('a', undefined);
    expect(log.filter((l) => l === 'close a')).toHaveLength(2);
    expect(registry.active).toEqual([]);
  });

  it('serves only the catalogs it is told to', async () => {
    const { registry, log } = setup(['mine']);
    for (const name of ['mine', 'other']) {
      await registry.setCatalog(name, catalog(name));
      await registry.setBinding(name, binding(name));
    }
    expect(log).toEqual([`start mine slots=${String(sampleBinding().slots)}`]);
  });
});
