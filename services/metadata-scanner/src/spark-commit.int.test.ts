import type { EnvelopeProducer } from '@icepack/runtime';
import type { ServiceProcess } from '@icepack/runtime/testing';
import { sparkSql, tableTruth } from '@icepack/test';
import { tableKey, type TableId, type TableState } from '@icepack/types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { dropNamespaceTree } from './testing/rest-tables.ts';
import {
  cleanupTest,
  scannerEnv,
  startScanner,
  testNames,
  testProducer,
} from './testing/scanner-harness.ts';
import { TopicReader } from './testing/topic-reader.ts';

// A real Spark commit, then its commit event: the published TableState carries the new
// figures, checked against Spark's own view of the table (the fixtures' truth script).

const infra = inject('infra');
const names = testNames();
const catalog = 'local';
const table: TableId = { catalog, namespace: [names.id, 'sales'], name: 'orders' };
const sqlName = `${catalog}.${names.id}.sales.orders`;

let scanner: ServiceProcess;
let states: TopicReader;
let producer: EnvelopeProducer;
let closeProducer: () => Promise<void>;

const statesOf = () =>
  states
    .byKey(tableKey(table))
    .filter((m) => m.value !== null)
    .map((m) => m.value!.payload as TableState);

beforeAll(async () => {
  await sparkSql(infra, catalog, [
    `CREATE NAMESPACE IF NOT EXISTS ${catalog}.${names.id}`,
    `CREATE NAMESPACE IF NOT EXISTS ${catalog}.${names.id}.sales`,
    `CREATE TABLE ${sqlName} (id BIGINT, country STRING) USING iceberg TBLPROPERTIES ('format-version'='2')`,
    `INSERT INTO ${sqlName} VALUES (1, 'de'), (2, 'fr')`,
  ]);
  ({ producer, close: closeProducer } = await testProducer(infra));
  scanner = await startScanner(
    scannerEnv(infra, names, {
      bootstrap: {
        catalogs: [{ name: catalog, type: 'rest', uri: infra.catalogUri }],
        bindings: [catalog],
      },
      extra: { ICEPACK_SCANNER_DISCOVERY_INTERVAL: '1h', ICEPACK_SCANNER_DEBOUNCE: '200ms' },
    }),
  );
  states = await TopicReader.start(infra.kafkaBrokers, names.tableState);
}, 600_000);

afterAll(async () => {
  await scanner?.stop('SIGTERM');
  await Promise.all([states?.stop(), closeProducer?.()]);
  await dropNamespaceTree(infra.catalogUri, [names.id]);
  await cleanupTest(infra, names);
});

describe('a Spark commit followed by its commit event', () => {
  it('publishes a TableState with the figures of the new snapshot', async () => {
    const [first] = await states.waitFor(() => {
      const found = statesOf();
      return found.length > 0 ? found : undefined;
    }, 'the state from discovery');
    expect(first!.files.dataFiles).toBeGreaterThan(0);
    expect(first!.files.records).toBe(2);

    await sparkSql(infra, catalog, [
      `INSERT INTO ${sqlName} VALUES (3, 'de'), (4, 'it'), (5, 'es')`,
      `DELETE FROM ${sqlName} WHERE id = 1`,
    ]);
    await producer.publish(names.commits, 'CommitObserved', tableKey(table), {
      table,
      operation: 'overwrite',
    });
    const truth = await tableTruth(table);
    const [state] = await states.waitFor(() => {
      const found = statesOf().filter((s) => s.metadataLocation === truth.metadataLocation);
      return found.length > 0 ? found : undefined;
    }, 'the state after the Spark commit');

    expect(state!.currentSnapshotId).toBe(truth.currentSnapshotId);
    expect(state!.lastSequenceNumber).toBe(truth.lastSequenceNumber);
    expect(state!.snapshots.total).toBe(truth.snapshotCount);
    expect(state!.files.dataFiles).toBe(truth.dataFiles.count);
    expect(state!.files.dataBytes).toBe(truth.dataFiles.bytes);
    expect(state!.files.records).toBe(truth.dataFiles.records);
    expect(state!.files.positionDeleteFiles).toBe(truth.positionDeleteFiles.count);
    expect(state!.files.dataFiles).toBeGreaterThan(first!.files.dataFiles);
  }, 600_000); // two Spark sessions (the commit and the truth) on two shared cores
});
