import { createLogger, EnvelopeProducer, ensureTopics, KafkaClient } from '@icepack/runtime';
import { sampleBinding, TopicSpecs } from '@icepack/types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CatalogRegistry } from '../domain/catalog-registry.ts';
import { activeAfterCatchUp } from '../domain/catch-up-gate.ts';
import { cleanupTest, testNames } from '../testing/scanner-harness.ts';
import { ControlPlane } from './control-plane.ts';

// Two replicas read the bindings topic each at its own pace: one can apply a new binding,
// schedule its discovery and publish scan requests before the other has read it. Work that
// names a catalog this replica does not know waits for its control plane to catch up.

const infra = inject('infra');
const names = testNames();
const logger = createLogger({ service: 'control-plane-test', level: 'silent' });
const kafka = new KafkaClient({ brokers: infra.kafkaBrokers, clientId: names.id, logger });
const producer = new EnvelopeProducer(kafka);
const registry = new CatalogRegistry();
let controlPlane: ControlPlane;

beforeAll(async () => {
  await producer.connect();
  await ensureTopics(kafka, [
    { ...TopicSpecs.catalogs, name: names.catalogs },
    { ...TopicSpecs.bindings, name: names.bindings },
    { ...TopicSpecs.dlq, name: names.dlq },
  ]);
});

afterAll(async () => {
  await controlPlane?.stop();
  await producer.disconnect();
  await cleanupTest(infra, names);
  await kafka.close();
});

describe('work for a catalog this replica has not read yet', () => {
  it('finds the catalog once the control plane has caught up with what was published before the work', async () => {
    const catalog = `late-${names.id}`;
    await producer.publish(names.catalogs, 'CatalogDefined', catalog, {
      name: catalog,
      type: 'rest',
      uri: infra.catalogUri,
    });
    await producer.publish(names.bindings, 'BindingUpdated', catalog, sampleBinding({ catalog }));
    // This replica's consumer starts only now (a slow or restarted replica), and the work
    // arrives at once: the consumer has not fetched the binding yet.
    controlPlane = new ControlPlane({
      kafka,
      producer,
      registry,
      catalogsTopic: names.catalogs,
      bindingsTopic: names.bindings,
      dlqTopic: names.dlq,
      groupPrefix: names.id,
      logger,
    });
    await controlPlane.start();
    const found = await activeAfterCatchUp(registry, catalog, () => controlPlane.current());
    expect(found?.uri).toBe(infra.catalogUri);
  });

  it('still answers "not bound" for a catalog nobody bound, after catching up', async () => {
    const catalog = `never-${names.id}`;
    await producer.publish(names.catalogs, 'CatalogDefined', catalog, {
      name: catalog,
      type: 'rest',
      uri: infra.catalogUri,
    });
    expect(await activeAfterCatchUp(registry, catalog, () => controlPlane.current())).toBe(
      undefined,
    );
    expect(registry.activeCatalogs().map((c) => c.name)).not.toContain(catalog);
  });
});
