import type { ServiceProcess } from '@icepack/runtime/testing';
import { tableKey, type TableId } from '@icepack/types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createNamespace,
  createTable,
  dropNamespaceTree,
  dropTable,
} from './testing/rest-tables.ts';
import { cleanupTest, scannerEnv, startScanner, testNames } from './testing/scanner-harness.ts';
import { TopicReader } from './testing/topic-reader.ts';

// Discovery on a short interval: a table dropped between two walks (no commit event, no
// scan request) is found missing by the next walk and tombstoned; one that appears is scanned.

const infra = inject('infra');
const names = testNames();
const catalog = 'walked';
const kept: TableId = { catalog, namespace: [names.id, 'deep'], name: 'kept' };
const dropped: TableId = { catalog, namespace: [names.id], name: 'dropped' };
const added: TableId = { catalog, namespace: [names.id, 'deep'], name: 'added' };

let scanner: ServiceProcess;
let states: TopicReader;

beforeAll(async () => {
  for (const t of [kept, dropped]) {
    await createNamespace(infra.catalogUri, t.namespace);
    await createTable(infra.catalogUri, t.namespace, t.name);
  }
  scanner = await startScanner(
    scannerEnv(infra, names, {
      bootstrap: {
        catalogs: [{ name: catalog, type: 'rest', uri: infra.catalogUri }],
        bindings: [catalog],
      },
      extra: { ICEPACK_SCANNER_DISCOVERY_INTERVAL: '2s' },
    }),
  );
  states = await TopicReader.start(infra.kafkaBrokers, names.tableState);
});

afterAll(async () => {
  await scanner?.stop('SIGTERM');
  await states?.stop();
  await dropNamespaceTree(infra.catalogUri, [names.id]);
  await cleanupTest(infra, names);
});

describe('periodic discovery', () => {
  it('tombstones a table that disappeared between walks and scans one that appeared', async () => {
    await states.waitFor(
      () => [kept, dropped].every((t) => states.byKey(tableKey(t)).length > 0),
      'states of both tables',
    );
    await dropTable(infra.catalogUri, dropped);
    await createTable(infra.catalogUri, added.namespace, added.name);

    const tombstone = await states.waitFor(
      () => states.byKey(tableKey(dropped)).find((m) => m.value === null),
      'a tombstone for the dropped table',
    );
    expect(tombstone.key).toBe(tableKey(dropped));
    await states.waitFor(
      () => states.byKey(tableKey(added)).length > 0,
      'a state for the new table',
    );
    // Repeated walks re-request unchanged tables, which are not published again.
    expect(states.byKey(tableKey(kept))).toHaveLength(1);
    expect(states.byKey(tableKey(kept))[0]!.value).not.toBeNull();
  });
});
