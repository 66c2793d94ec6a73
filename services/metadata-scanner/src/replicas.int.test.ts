import type { EnvelopeProducer } from '@icepack/runtime';
import type { ServiceProcess } from '@icepack/runtime/testing';
import { BULLMQ_PREFIX, sampleBinding, tableKey, type TableId } from '@icepack/types';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createNamespace, createTable, dropNamespaceTree } from './testing/rest-tables.ts';
import {
  metricValue,
  cleanupTest,
  scannerEnv,
  startScanner,
  testNames,
  testProducer,
  until,
} from './testing/scanner-harness.ts';
import { TopicReader } from './testing/topic-reader.ts';

// Two scanner processes in one consumer group, started with no catalog at all: the
// binding arrives on the bindings topic while both run (as the provisioner would send it).

const infra = inject('infra');
const names = testNames();
const catalog = `live-${names.id}`;
const tables: TableId[] = Array.from({ length: 40 }, (_, i) => ({
  catalog,
  namespace: [names.id, `n${i % 4}`],
  name: `t${i}`,
}));
const env = scannerEnv(infra, names, {
  extra: { ICEPACK_SCANNER_DISCOVERY_INTERVAL: '1h', ICEPACK_SCANNER_CATALOG_CONCURRENCY: '2' },
});

let a: ServiceProcess;
let b: ServiceProcess;
let states: TopicReader;
let producer: EnvelopeProducer;
let closeProducer: () => Promise<void>;

beforeAll(async () => {
  for (const t of tables) {
    await createNamespace(infra.catalogUri, t.namespace);
    await createTable(infra.catalogUri, t.namespace, t.name);
  }
  ({ producer, close: closeProducer } = await testProducer(infra));
  a = await startScanner(env);
  b = await startScanner(env);
  states = await TopicReader.start(infra.kafkaBrokers, names.tableState);
});

afterAll(async () => {
  await Promise.all([a?.stop('SIGTERM'), b?.stop('SIGTERM')]);
  await Promise.all([states?.stop(), closeProducer?.()]);
  await dropNamespaceTree(infra.catalogUri, [names.id]);
  await cleanupTest(infra, names);
});

/** A failed wait says what both replicas were doing (their recent log lines). */
const explain = (error: unknown): never => {
  const missing = tables.filter((t) => states.byKey(tableKey(t)).length === 0).length;
  throw new Error(
    `${String(error)}; ${missing} of ${tables.length} tables without a state\n` +
      `replica a:\n${a.describe()}\nreplica b:\n${b.describe()}`,
  );
};

describe('two scanner replicas', () => {
  it('pick up a new binding live, split the scans by partition and miss no table', async () => {
    // Both hold scan partitions before any work exists.
    await until(
      () => {
        const last = (s: ServiceProcess) =>
          s.lines.filter((l) => l.msg === 'joined consumer group' && l.groupId === names.id).at(-1);
        const sizes = [a, b].map(
          (s) =>
            (last(s)?.assignment as Record<string, number[]> | undefined)?.[names.scanRequests]
              ?.length ?? 0,
        );
        return sizes[0]! > 0 && sizes[1]! > 0 && sizes[0]! + sizes[1]! === 6;
      },
      'the group to settle on 6 partitions split across both',
      40_000,
    ).catch(explain);

    await producer.publish(names.catalogs, 'CatalogDefined', catalog, {
      name: catalog,
      type: 'rest',
      uri: infra.catalogUri,
    });
    await producer.publish(names.bindings, 'BindingUpdated', catalog, sampleBinding({ catalog }));

    await states
      .waitFor(
        () => tables.every((t) => states.byKey(tableKey(t)).length > 0),
        'a state for every table',
        60_000,
      )
      .catch(explain);
    const scannedA = await metricValue(a, 'icepack_scanner_tables_scanned_total', { catalog });
    const scannedB = await metricValue(b, 'icepack_scanner_tables_scanned_total', { catalog });
    expect(scannedA).toBeGreaterThan(0);
    expect(scannedB).toBeGreaterThan(0);
    // One discovery walk cluster-wide: exactly one replica ran it.
    const walks = [a, b].map(
      (s) =>
        s.lines.filter((l) => l.msg === 'discovery walk finished' && l.catalog === catalog).length,
    );
    expect(walks.sort()).toEqual([0, 1]);
  });

  it('stop scanning a catalog once its binding is removed', async () => {
    await producer.tombstone(names.bindings, catalog);
    const queue = new Queue(`${names.id}-discovery`, {
      connection: new Redis(infra.redisUrl, { maxRetriesPerRequest: null }),
      prefix: BULLMQ_PREFIX,
    });
    try {
      await until(
        async () => (await queue.getJobSchedulers()).length === 0,
        'the discovery scheduler to be removed',
      );
    } finally {
      await queue.close();
      await queue.disconnect();
    }
    const table = tables[0]!;
    const before = states.byKey(tableKey(table)).length;
    const skipped = async () =>
      (await metricValue(a, 'icepack_scanner_tables_skipped_total', {
        catalog,
        reason: 'unbound',
      })) +
      (await metricValue(b, 'icepack_scanner_tables_skipped_total', {
        catalog,
        reason: 'unbound',
      }));
    await until(async () => {
      // Both replicas apply the tombstone on their own; ask until the owner of the partition has.
      await producer.publish(names.scanRequests, 'ScanTable', tableKey(table), {
        table,
        reason: 'manual',
        requestedAt: new Date().toISOString(),
      });
      await new Promise((r) => setTimeout(r, 300));
      return (await skipped()) > 0;
    }, 'a scan request ignored as unbound');
    expect(states.byKey(tableKey(table))).toHaveLength(before);
  });
});
