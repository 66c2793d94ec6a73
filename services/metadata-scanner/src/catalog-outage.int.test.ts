import type { EnvelopeProducer } from '@icepack/runtime';
import type { ServiceProcess } from '@icepack/runtime/testing';
import { tableKey, type TableId } from '@icepack/types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CatalogProxy } from './testing/catalog-proxy.ts';
import {
  createNamespace,
  createTable,
  dropNamespaceTree,
  setProperty,
} from './testing/rest-tables.ts';
import {
  metricValue,
  cleanupTest,
  scannerEnv,
  startScanner,
  testNames,
  testProducer,
} from './testing/scanner-harness.ts';
import { TopicReader } from './testing/topic-reader.ts';

// The scanner reaches the catalog through a proxy the test switches off and on again.

const infra = inject('infra');
const names = testNames();
const catalog = 'flaky';
const tables: TableId[] = Array.from({ length: 5 }, (_, i) => ({
  catalog,
  namespace: [names.id],
  name: `t${i}`,
}));

let proxy: CatalogProxy;
let scanner: ServiceProcess;
let states: TopicReader;
let producer: EnvelopeProducer;
let closeProducer: () => Promise<void>;

const locationOf = async (table: TableId): Promise<string> => {
  const response = await fetch(
    `${infra.catalogUri}/v1/namespaces/${table.namespace[0]!}/tables/${table.name}`,
  );
  return ((await response.json()) as { 'metadata-location': string })['metadata-location'];
};
const published = (table: TableId, location: string) =>
  states
    .byKey(tableKey(table))
    .some(
      (m) =>
        (m.value?.payload as { metadataLocation?: string } | undefined)?.metadataLocation ===
        location,
    );

beforeAll(async () => {
  await createNamespace(infra.catalogUri, [names.id]);
  for (const t of tables) await createTable(infra.catalogUri, t.namespace, t.name);
  proxy = new CatalogProxy(infra.catalogUri);
  await proxy.up();
  ({ producer, close: closeProducer } = await testProducer(infra));
  scanner = await startScanner(
    scannerEnv(infra, names, {
      bootstrap: {
        catalogs: [{ name: catalog, type: 'rest', uri: proxy.uri }],
        bindings: [catalog],
      },
      extra: {
        ICEPACK_SCANNER_DISCOVERY_INTERVAL: '1h',
        ICEPACK_SCANNER_DEBOUNCE: '200ms',
        ICEPACK_SCANNER_CATALOG_MAX_BACKOFF: '4s',
      },
    }),
  );
  // After the scanner: it creates the topics.
  states = await TopicReader.start(infra.kafkaBrokers, names.tableState);
});

afterAll(async () => {
  await scanner?.stop('SIGTERM');
  await proxy?.down();
  await Promise.all([states?.stop(), closeProducer?.()]);
  await dropNamespaceTree(infra.catalogUri, [names.id]);
  await cleanupTest(infra, names);
});

describe('catalog outage', () => {
  it('reports the catalog on /readyz while it is down, then scans every table committed meanwhile', async () => {
    const before = await Promise.all(tables.map(locationOf));
    await states.waitFor(() => tables.every((t, i) => published(t, before[i]!)), 'initial states');

    await proxy.down();
    // Writers keep committing (straight to the catalog) while the scanner cannot reach it.
    for (const table of tables) {
      await setProperty(infra.catalogUri, table, 'during-outage', 'yes');
      await producer.publish(names.commits, 'CommitObserved', tableKey(table), { table });
    }
    const after = await Promise.all(tables.map(locationOf));
    const down = await scanner.waitForReadyz(
      (r) => r.status === 503 && r.body.failing.includes('catalogs'),
    );
    expect(down.body.checks.catalogs?.detail).toMatch(/^flaky: connection/);
    expect(
      await metricValue(scanner, 'icepack_scanner_tables_failed_total', { catalog }),
    ).toBeGreaterThan(0);
    expect(tables.some((t, i) => published(t, after[i]!))).toBe(false);

    await proxy.up();
    await states.waitFor(
      () => tables.every((t, i) => published(t, after[i]!)),
      'states after the outage',
      120_000,
    );
    const ready = await scanner.waitForReadyz((r) => r.status === 200);
    expect(ready.body.checks.catalogs).toEqual({ ok: true });
  });
});
