// The console in a real headless Chromium (Debian's package, driven by playwright-core):
// real table states computed from the fixture tables in the REST catalog, real Redis and
// BullMQ queues. One browser for the whole file (test-time budget). Screenshots of each page
// go to $ICEPACK_RUN/artefacts/console/.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { computeTableState, RestCatalog } from '@icepack/iceberg';
import { FixtureKey, generateFixtures, groundTruthSchema, type GroundTruth } from '@icepack/test';
import { quotaUseKey, tableKey, type TableState } from '@icepack/types';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { tableState } from './domain/state-fixtures.ts';
import { startConsoleStack, type ConsoleStack } from './testing/console-stack.ts';

const infra = inject('infra');
const catalog = `console-ui-${randomUUID().slice(0, 8)}`;
const artefacts = join(infra.runDir, 'artefacts', 'console');
const shown = [
  FixtureKey.partitionedSmallFiles,
  FixtureKey.morPositionDeletes,
  FixtureKey.manySnapshots,
];
let stack: ConsoleStack;
let browser: Browser;
let page: Page;
const states = new Map<string, TableState>();

beforeAll(async () => {
  const { stdout } = await promisify(execFile)('bash', [
    join(import.meta.dirname, '..', '..', '..', 'deploy', 'local', 'chromium.sh'),
  ]);
  // The fixture tables as they are now (other tests may have maintained them since they were
  // built: their figures are still real); built with Spark only when missing.
  const truthFile = join(infra.runDir, 'fixtures', 'ground-truth.json');
  let truth: GroundTruth = existsSync(truthFile)
    ? groundTruthSchema.parse(JSON.parse(await readFile(truthFile, 'utf8')))
    : await generateFixtures({ reuse: true });
  let rest = new RestCatalog({ name: truth.catalog.name, uri: infra.catalogUri });
  const present = await Promise.all(
    shown.map(async (key) => {
      const id = truth.tables[key]?.truth.id;
      return id !== undefined && (await rest.loadTable(id)).status === 'loaded';
    }),
  );
  if (!present.every(Boolean)) {
    truth = await generateFixtures({ reuse: true });
    rest = new RestCatalog({ name: truth.catalog.name, uri: infra.catalogUri });
  }
  stack = await startConsoleStack(infra.redisUrl);
  for (const key of shown) {
    const id = truth.tables[key]!.truth.id;
    const loaded = await rest.loadTable(id);
    if (loaded.status !== 'loaded') throw new Error(`fixture ${key} is not in the catalog`);
    // The fixture's real figures, under this test's own catalog name (its own queue).
    const state = { ...(await computeTableState(loaded.table)), table: { ...id, catalog } };
    states.set(key, state);
    await stack.planner.handleState(state);
  }
  // One succeeded merge in the ledger, as the outcomes consumer records it: the history chart.
  const small = states.get(FixtureKey.partitionedSmallFiles)!;
  await stack.ledger.record(catalog, {
    at: new Date().toISOString(),
    tableKey: tableKey(small.table),
    taskId: `merge/${tableKey(small.table)}`,
    taskType: 'merge',
    cost: { runMs: 42_000, coreSecondsRequested: 84 },
    benefit: {
      dataFilesRemoved: small.files.dataFiles - 4,
      deleteFilesRemoved: 0,
      snapshotsRemoved: 0,
    },
    before: {
      dataFiles: small.files.dataFiles,
      smallFiles: small.files.smallFiles,
      deleteFiles: 0,
      snapshots: 3,
      bytes: 40_960,
    },
    after: { dataFiles: 4, smallFiles: 4, deleteFiles: 0, snapshots: 4, bytes: 38_912 },
  });
  // That merge's success, as the outcomes consumer records it: the overview's last maintenance.
  await stack.lastSucceeded.record(small.table, 'merge', new Date().toISOString());
  // The group's use as the catalog's dispatcher publishes it (its own test covers the writing).
  await stack.redis.set(
    quotaUseKey(catalog),
    JSON.stringify({
      group: `icepack-${catalog}`,
      source: 'budget',
      cpu: { usedMillicores: 2_000, hardMillicores: 4_000 },
      memory: { usedBytes: 3 * 2 ** 30, hardBytes: 8 * 2 ** 30 },
      at: new Date().toISOString(),
    }),
    'PX',
    600_000,
  );
  await mkdir(artefacts, { recursive: true });
  browser = await chromium.launch({ executablePath: stdout.trim(), args: ['--no-sandbox'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await stack?.redis.del(quotaUseKey(catalog));
  await stack?.close([catalog]);
});

const shot = (name: string) =>
  page.screenshot({ path: join(artefacts, `${name}.png`), fullPage: true });

describe('console in Chromium', () => {
  it('refuses a missing or wrong token, then signs in with the token using only the keyboard', async () => {
    await page.goto(`${stack.url}/console/`);
    await page.locator('#token').waitFor();
    await page.keyboard.type('not-the-token');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('[role=alert]').textContent()).toContain('refused');
    await shot('sign-in-refused');
    await page.locator('#token').fill(stack.token);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  });

  it('overview lists the catalog and the fixture tables with their real figures, sortable', async () => {
    const small = states.get(FixtureKey.partitionedSmallFiles)!;
    const row = page.locator('table.tables tr', { hasText: tableKey(small.table) });
    await row.waitFor();
    await expect
      .poll(() => row.locator('td').nth(1).textContent())
      .toBe(String(small.files.smallFiles));
    await expect.poll(() => row.locator('td.last-maintenance').textContent()).toContain('merge');
    await expect.poll(() => page.locator('table.catalogs').textContent()).toContain(catalog);
    const group = page.locator('table.catalogs tr', { hasText: catalog });
    await expect
      .poll(() => group.locator('td.quota').textContent())
      .toContain('cpu 2 / 4 cores · memory 3.0 GiB / 8.0 GiB');
    await page.locator('#catalog').selectOption(catalog);
    await expect.poll(() => page.locator('table.tables tbody tr').count()).toBe(shown.length);
    await page.getByRole('button', { name: /Snapshots/ }).click();
    const many = states.get(FixtureKey.manySnapshots)!;
    await expect
      .poll(() => page.locator('table.tables tbody tr').first().textContent())
      .toContain(tableKey(many.table));
    await shot('overview');
  });

  it('table page shows health, partitions and the plan explanation', async () => {
    const small = states.get(FixtureKey.partitionedSmallFiles)!;
    await page.getByRole('link', { name: tableKey(small.table) }).click();
    await page.getByRole('heading', { name: tableKey(small.table) }).waitFor();
    await expect.poll(() => page.locator('#pause-state').textContent()).toContain('Active');
    // cleanup, merge, sort and orphans (off unless the table opts in, ADR 0032).
    await expect.poll(() => page.locator('.decision').count()).toBe(4);
    await expect
      .poll(() => page.locator('table.partitions tbody tr').count())
      .toBe(small.partitions.length);
    await expect.poll(() => page.locator('table.history tbody tr').count()).toBe(1);
    // The run's before → after figures.
    await expect
      .poll(() => page.locator('table.history tbody tr').textContent())
      .toContain(`${String(small.files.dataFiles)} → 4`);
    // Chart.js drew into the canvas (its size is set by the library, not the markup).
    await expect
      .poll(() => page.locator('.chart canvas').evaluate((c: HTMLCanvasElement) => c.width))
      .toBeGreaterThan(0);
    await shot('table');
  });

  it('pausing the table stops its planning, and the page says so', async () => {
    const small = states.get(FixtureKey.partitionedSmallFiles)!;
    await page.locator('#pause').click();
    await expect
      .poll(() => page.locator('#pause-state').textContent())
      .toContain('Paused from the console by token');
    // What waited is removed by the pause itself (ADR 0024); a newer state plans nothing.
    const none = ['missing', 'missing', 'missing'];
    const removed = await stack.queue.inspect(small.table);
    expect([removed.cleanup.state, removed.merge.state, removed.sort.state]).toEqual(none);
    await stack.planner.handleState({
      ...small,
      lastSequenceNumber: String(BigInt(small.lastSequenceNumber) + 1n),
    });
    const jobs = await stack.queue.inspect(small.table);
    expect([jobs.cleanup.state, jobs.merge.state, jobs.sort.state]).toEqual(none);
    await page.reload();
    await expect.poll(() => page.locator('#pause-state').textContent()).toContain('plans no tasks');
    await expect.poll(() => page.locator('.decision').first().textContent()).toContain('paused');
    await shot('table-paused');
  });

  it('queue page lists the waiting tasks in run order with score and waiting time', async () => {
    await page.goto(`${stack.url}/console/#/queue/${encodeURIComponent(catalog)}`);
    const waiting = await stack.queue.waiting(catalog);
    expect(waiting.length).toBeGreaterThan(0);
    await expect.poll(() => page.locator('table.waiting tbody tr').count()).toBe(waiting.length);
    await expect
      .poll(() => page.locator('table.waiting tbody tr').first().textContent())
      .toContain(String(waiting[0]!.task.score.total));
    await expect.poll(() => page.locator('body').textContent()).toContain('No recent failure.');
    await shot('queue');
  });

  it('"run now" from the keyboard moves the last waiting task to the front of the run order', async () => {
    // One more waiting task (a table with many small files), so the order has two rows.
    await stack.planner.handleState(
      tableState(
        { smallFiles: 400, newDataFiles: 5 },
        { table: { catalog, namespace: ['demo'], name: 'extra' } },
      ),
    );
    await page.getByRole('button', { name: 'Refresh' }).click();
    const waiting = await stack.queue.waiting(catalog);
    expect(waiting.length).toBeGreaterThan(1);
    await expect.poll(() => page.locator('table.waiting tbody tr').count()).toBe(waiting.length);
    const last = waiting.at(-1)!.task.id;
    const button = page.getByRole('button', { name: `Run ${last} now` });
    await button.focus();
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.locator('#queue-action').textContent())
      .toContain('raised to the front of the queue');
    const first = page.locator('table.waiting tbody tr').first();
    await expect.poll(() => first.textContent()).toContain(last.split('/').slice(1).join('/'));
    await expect.poll(() => first.textContent()).toContain('run now');
    expect((await stack.queue.waiting(catalog))[0]!.task.id).toBe(last);
    await shot('queue-run-now');
  });

  it('a token that no longer holds (rotated or expired) is refused', async () => {
    await page.evaluate(() => sessionStorage.setItem('icepack-console-token', 'an-old-token'));
    await page.reload();
    await expect.poll(() => page.locator('[role=alert]').textContent()).toContain('refused');
    expect(await page.locator('table').count()).toBe(0);
  });

  it('opens signed in from the URL ./dev up prints (token in the fragment), then drops it', async () => {
    const fresh = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await fresh.goto(`${stack.url}/console/#token=${encodeURIComponent(stack.token)}`);
    await fresh.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(fresh.url()).not.toContain('token');
    await fresh.close();
  });
});
