import type { ServiceProcess } from '@icepack/runtime/testing';
import {
  parseMessage,
  stringifyJson,
  tableKey,
  type TableId,
  type TableState,
} from '@icepack/types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createNamespace, createTable, dropNamespaceTree } from './testing/rest-tables.ts';
import { cleanupTest, scannerEnv, startScanner, testNames } from './testing/scanner-harness.ts';
import { TopicReader } from './testing/topic-reader.ts';

// One scanner told to write TableScanned version 2 (ADR 0050): the partition list packed,
// which this release's planners read as version 1.

const infra = inject('infra');
const names = testNames();
const catalog = 'local';
const table: TableId = { catalog, namespace: [names.id], name: 'packed' };

let scanner: ServiceProcess;
let states: TopicReader;

beforeAll(async () => {
  await createNamespace(infra.catalogUri, table.namespace);
  await createTable(infra.catalogUri, table.namespace, table.name);
  scanner = await startScanner(
    scannerEnv(infra, names, {
      bootstrap: {
        catalogs: [{ name: catalog, type: 'rest', uri: infra.catalogUri }],
        bindings: [catalog],
      },
      extra: { ICEPACK_SCANNER_DISCOVERY_INTERVAL: '1h', ICEPACK_SCANNER_TABLE_STATE_VERSION: '2' },
    }),
  );
  states = await TopicReader.start(infra.kafkaBrokers, names.tableState);
});

afterAll(async () => {
  await scanner?.stop('SIGTERM');
  await states?.stop();
  await dropNamespaceTree(infra.catalogUri, table.namespace);
  await cleanupTest(infra, names);
});

describe('ICEPACK_SCANNER_TABLE_STATE_VERSION=2', () => {
  it('publishes TableScanned version 2, its partition list packed, read back as a state', async () => {
    const message = await states.waitFor(
      (ms) => ms.find((m) => m.key === tableKey(table) && m.value !== null),
      'the state of the table',
    );
    const envelope = message.value!;
    expect(envelope).toMatchObject({ type: 'TableScanned', version: 2 });
    const payload = envelope.payload as Record<string, unknown>;
    expect(payload).not.toHaveProperty('partitions');
    expect(payload).toHaveProperty('packedPartitions', { keys: [], rows: [] });
    const state = parseMessage(stringifyJson(envelope), ['TableScanned']).payload as TableState;
    expect(state.table).toEqual(table);
    expect(state.partitions).toEqual([]);
  });
});
