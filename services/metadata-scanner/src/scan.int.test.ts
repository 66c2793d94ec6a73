import { randomBytes } from 'node:crypto';
import type { EnvelopeProducer } from '@icepack/runtime';
import type { ServiceProcess } from '@icepack/runtime/testing';
import { createEnvelope, serializeEnvelope, tableKey, type TableId } from '@icepack/types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
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
  until,
} from './testing/scanner-harness.ts';
import { TopicReader } from './testing/topic-reader.ts';

// One scanner process against the real Kafka, Redis and REST catalog, bound by bootstrap
// to the local catalog. Discovery runs once at start (the interval is an hour), so every
// later scan in this file is caused by the test itself.

const infra = inject('infra');
const names = testNames();
const catalog = 'local';
const root = names.id;
const id = (namespace: string[], name: string): TableId => ({ catalog, namespace, name });

// Nested namespaces 3 levels deep, plus one namespace with more tables than a page (100).
const nested: TableId[] = [
  id([root], 'top'),
  id([root, 'a'], 'mid'),
  id([root, 'a', 'b'], 'deep'),
  id([root, 'a', 'b', 'c'], 'deepest'),
  id([root, 'a', 'b', 'c'], 'deepest_too'),
  id([root, 'x'], 'side'),
];
const wide = Array.from({ length: 105 }, (_, i) =>
  id([root, 'wide'], `t${String(i).padStart(3, '0')}`),
);
const all = [...nested, ...wide];

let scanner: ServiceProcess;
let states: TopicReader;
let scans: TopicReader;
let dlq: TopicReader;
let producer: EnvelopeProducer;
let closeProducer: () => Promise<void>;

/** A W3C traceparent with a fresh trace id, as a writer's instrumentation would send. */
function traceparent(): { header: string; traceId: string } {
  const traceId = randomBytes(16).toString('hex');
  return { header: `00-${traceId}-${randomBytes(8).toString('hex')}-01`, traceId };
}

async function sendCommit(table: TableId, header?: string): Promise<string> {
  const envelope = createEnvelope('CommitObserved', tableKey(table), {
    table,
    operation: 'append',
  });
  await producer.sendRaw(
    names.commits,
    tableKey(table),
    serializeEnvelope(envelope),
    header === undefined ? {} : { traceparent: header },
  );
  return envelope.id;
}

async function metadataLocation(table: TableId): Promise<string> {
  const ns = encodeURIComponent(table.namespace.join('\u001f'));
  const response = await fetch(`${infra.catalogUri}/v1/namespaces/${ns}/tables/${table.name}`);
  return ((await response.json()) as { 'metadata-location': string })['metadata-location'];
}

/** A scanner bound to the local catalog; discovery only at start (interval an hour). */
const startLocalScanner = (): Promise<ServiceProcess> =>
  startScanner(
    scannerEnv(infra, names, {
      bootstrap: {
        catalogs: [{ name: catalog, type: 'rest', uri: infra.catalogUri }],
        bindings: [catalog],
      },
      extra: { ICEPACK_SCANNER_DISCOVERY_INTERVAL: '1h', ICEPACK_SCANNER_DEBOUNCE: '2s' },
    }),
  );

const skippedUnchanged = (): Promise<number> =>
  metricValue(scanner, 'icepack_scanner_tables_skipped_total', { catalog, reason: 'unchanged' });

const stateOf = (table: TableId, location?: string) =>
  states
    .byKey(tableKey(table))
    .filter((m) => m.value !== null)
    .map((m) => m.value!.payload as { metadataLocation: string; table: TableId })
    .filter((p) => location === undefined || p.metadataLocation === location);

beforeAll(async () => {
  for (const table of all) {
    await createNamespace(infra.catalogUri, table.namespace);
    await createTable(infra.catalogUri, table.namespace, table.name);
  }
  ({ producer, close: closeProducer } = await testProducer(infra));
  scanner = await startLocalScanner();
  states = await TopicReader.start(infra.kafkaBrokers, names.tableState);
  scans = await TopicReader.start(infra.kafkaBrokers, names.scanRequests);
  dlq = await TopicReader.start(infra.kafkaBrokers, names.dlq);
});

afterAll(async () => {
  await scanner?.stop('SIGTERM');
  await Promise.all([states?.stop(), scans?.stop(), dlq?.stop(), closeProducer?.()]);
  await dropNamespaceTree(infra.catalogUri, [root]);
  await cleanupTest(infra, names);
});

describe('metadata-scanner against the real catalog, Kafka and Redis', () => {
  it('discovers every table in nested and paged namespaces and publishes its TableState', async () => {
    await states.waitFor(() => all.every((t) => stateOf(t).length > 0), 'a state for every table');
    for (const table of all) {
      const [state] = stateOf(table);
      expect(state!.table).toEqual(table);
      expect(state!.metadataLocation).toBe(await metadataLocation(table));
    }
    // One discovery request per table, keyed by table.
    for (const table of nested) {
      const requests = scans.byKey(tableKey(table));
      expect(requests.map((m) => (m.value!.payload as { reason: string }).reason)).toEqual([
        'discovery',
      ]);
    }
    expect(
      await metricValue(scanner, 'icepack_scanner_tables_scanned_total', { catalog }),
    ).toBeGreaterThanOrEqual(all.length);
  });

  it('does not re-read or re-publish a table whose metadata did not change', async () => {
    const table = nested[0]!;
    await states.waitFor(() => stateOf(table).length > 0, 'first state');
    const skippedBefore = await skippedUnchanged();
    const published = stateOf(table).length;
    await producer.publish(names.scanRequests, 'ScanTable', tableKey(table), {
      table,
      reason: 'manual',
      requestedAt: new Date().toISOString(),
    });
    await until(
      async () => (await skippedUnchanged()) > skippedBefore,
      'the manual scan to be skipped',
    );
    expect(stateOf(table)).toHaveLength(published);
  });

  it('turns a burst of commits into one scan that sees the last commit, in the commit trace', async () => {
    const table = nested[2]!;
    await states.waitFor(() => stateOf(table).length > 0, 'first state');
    const { header, traceId } = traceparent();
    // Three commits in quick succession, each followed by its event (well inside the 2 s window).
    await setProperty(infra.catalogUri, table, 'burst', '1');
    const firstEvent = await sendCommit(table, header);
    await setProperty(infra.catalogUri, table, 'burst', '2');
    await sendCommit(table);
    await setProperty(infra.catalogUri, table, 'burst', '3');
    await sendCommit(table);
    const last = await metadataLocation(table);

    const [published] = await states.waitFor(() => {
      const hits = states
        .byKey(tableKey(table))
        .filter(
          (m) =>
            (m.value?.payload as { metadataLocation?: string } | undefined)?.metadataLocation ===
            last,
        );
      return hits.length > 0 ? hits : undefined;
    }, 'the state after the burst');
    const state = published!.value!.payload as { properties: Record<string, string> };
    expect(state.properties.burst).toBe('3');
    // One scan request for the whole burst, pointing at the first event; same trace.
    const commitScans = scans
      .byKey(tableKey(table))
      .filter((m) => (m.value!.payload as { reason: string }).reason === 'commit');
    expect(commitScans).toHaveLength(1);
    expect((commitScans[0]!.value!.payload as { cause: { eventId: string } }).cause.eventId).toBe(
      firstEvent,
    );
    expect(published!.headers.traceparent?.split('-')[1]).toBe(traceId);
    expect(
      await metricValue(scanner, 'icepack_scanner_commits_total', {
        catalog,
        outcome: 'debounced',
      }),
    ).toBe(2);
  });

  it('sends a malformed commit event to the DLQ and processes the next good one', async () => {
    const table = nested[4]!;
    await states.waitFor(() => stateOf(table).length > 0, 'first state');
    await producer.sendRaw(names.commits, tableKey(table), '{"type":"CommitObserved", not json');
    await producer.sendRaw(
      names.commits,
      tableKey(table),
      JSON.stringify({
        ...createEnvelope('CommitObserved', tableKey(table), { table }),
        payload: { table: { catalog } },
      }),
    );
    await setProperty(infra.catalogUri, table, 'after-dlq', 'yes');
    await sendCommit(table);
    const location = await metadataLocation(table);

    await states.waitFor(
      () => stateOf(table, location).length > 0,
      'the state after the good commit',
    );
    const records = await dlq.waitFor(
      (messages) => (messages.length >= 2 ? messages : undefined),
      'two DLQ records',
    );
    const payloads = records.map(
      (m) => m.value!.payload as { sourceTopic: string; reason: string; key: string },
    );
    expect(payloads.map((p) => p.sourceTopic)).toEqual([names.commits, names.commits]);
    expect(payloads.map((p) => p.key)).toEqual([tableKey(table), tableKey(table)]);
    expect(payloads[0]!.reason).toMatch(/not JSON/);
    expect(payloads[1]!.reason).toMatch(/payload\.table\.namespace/);
  });

  it('publishes a tombstone when a scanned table no longer exists', async () => {
    const table = nested[5]!;
    await states.waitFor(() => stateOf(table).length > 0, 'first state');
    const ns = encodeURIComponent(table.namespace.join('\u001f'));
    await fetch(`${infra.catalogUri}/v1/namespaces/${ns}/tables/${table.name}`, {
      method: 'DELETE',
    });
    await sendCommit(table);
    const tombstone = await states.waitFor(
      () => states.byKey(tableKey(table)).find((m) => m.value === null),
      'a tombstone',
    );
    expect(tombstone.key).toBe(tableKey(table));
  });

  it('after a restart, continues from the states stored in Redis: unchanged tables are not re-published', async () => {
    const remaining = all.filter((table) => table !== nested[5]); // dropped by the test above
    await states.waitFor(
      () => remaining.every((t) => stateOf(t).length > 0),
      'a state for every table',
    );
    const publishedBefore = new Map(remaining.map((t) => [tableKey(t), stateOf(t).length]));
    await scanner.stop('SIGTERM');
    // A new process: its in-memory states and ETags are gone; only Redis remembers.
    scanner = await startLocalScanner();
    for (const table of remaining) {
      await producer.publish(names.scanRequests, 'ScanTable', tableKey(table), {
        table,
        reason: 'manual',
        requestedAt: new Date().toISOString(),
      });
    }
    await until(
      async () => (await skippedUnchanged()) >= remaining.length,
      'every re-scan to be skipped as unchanged',
    );
    expect(await metricValue(scanner, 'icepack_scanner_tables_scanned_total', { catalog })).toBe(0);
    for (const table of remaining) {
      expect(stateOf(table), tableKey(table)).toHaveLength(publishedBefore.get(tableKey(table))!);
    }
  });
});
