// The cost benchmark's orchestration (adapters): per mode a private Redis, Kafka and REST
// catalog (PrivateStack, as the lake simulator), the tables process (bench/cost/tables.py, one
// Spark session), the four services at their defaults but for the mode's two settings, a wait
// until the queue drained, then the tables read again. Figures are computed in ./domain/.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { ServiceProcess } from '@icepack/runtime/testing';
import { infraEnv, PrivateStack, type Service, type TaskEventLog } from '@icepack/test';
import { BULLMQ_PREFIX, queueNameForCatalog, sizingModelKey } from '@icepack/types';
import { machine } from '../iceberg/machine.ts';
import { readLaunches, startServices, stopRun, WriterProcess } from '../lake-sim/lake-sim.ts';
import { duplicateRuns, taskRows } from '../lake-sim/domain/ledger.ts';
import type { TaskRow } from '../lake-sim/domain/ledger.ts';
import { smallTablesOf } from './domain/options.ts';
import type { BatchMode, CostOptions, Sizing } from './domain/options.ts';
import type { CostRun, TableCheck, TableFigures } from './domain/summary.ts';

const NAMESPACE = 'cost';
/** The local stack's resource group (lake-sim's): one slot of 1 driver + 1 executor core. */
const CORES_PER_RUN = 2;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A line of the tables process (bench/cost/tables.py). */

type Line = Record<string, unknown> & { kind: string; t: number };

/** One run of the benchmark in one mode. */
export async function runCost(
  options: CostOptions,
  mode: BatchMode,
  sizing: Sizing,
  log: (text: string) => void,
): Promise<CostRun> {
  const env = infraEnv();
  const name = `${mode}, ${sizing}`;
  const catalog = `cost${randomBytes(4).toString('hex')}`;
  const startedAt = new Date().toISOString();
  const stack = await PrivateStack.start();
  log(`${name}: private Redis, Kafka, REST catalog at ${stack.runDir}; catalog ${catalog}`);
  const services = new Map<Service, ServiceProcess>();
  const stateDir = join(stack.runDir, 'dispatcher');
  let events: TaskEventLog | undefined;
  let redis: Redis | undefined;
  let tables: WriterProcess | undefined;
  const loads: number[] = [loadavg()[0]!];
  try {
    const small = smallTablesOf(options, mode);
    const child = spawn(
      env.python,
      [
        join(import.meta.dirname, 'tables.py'),
        ...['--catalog-uri', stack.catalogUri, '--catalog-name', catalog],
        ...['--namespace', NAMESPACE, '--small', String(small), '--large', String(options.large)],
        ...['--large-mb', String(options.largeMb), '--large-files', String(options.largeFiles)],
      ],
      { env: { ...process.env, ICEPACK_SPARK_JARS: env.sparkJars }, stdio: 'pipe' },
    );
    child.stderr.pipe(createWriteStream(join(stack.runDir, 'tables.log')));
    tables = new WriterProcess(child);
    tables.onLine = (line) => {
      if (line.kind === 'table')
        log(`${name}: created ${String(line.table)} (${String(line.t)} s)`);
    };
    const ready = await tables.next('ready');
    const createSeconds = ready.t;
    log(`${name}: ${String(small + options.large)} tables in ${String(createSeconds)} s`);

    const go = Date.now();
    events = await startServices(
      stack,
      catalog,
      { catalogUri: stack.catalogUri, properties: {} },
      services,
      {
        dispatcher: {
          ICEPACK_DISPATCHER_BATCH: String(mode === 'batched'),
          ICEPACK_SIZING_LEARNED: String(sizing === 'learned'),
        },
      },
    );
    log(`${name}: the four services run, bound to ${catalog}`);
    redis = new Redis(stack.redisUrl, { maxRetriesPerRequest: null });
    const names = tables.of<Line>('table').map((l) => String(l.table));
    const drained = await settle(redis, catalog, events, names, options.settleMinutes, log, loads);
    const maintainMs = Date.now() - go;
    const model = await redis.get(sizingModelKey(catalog)).catch(() => null);
    for (const s of [...services.values()].reverse()) await s.stop('SIGTERM');
    services.clear();
    const rows: TaskRow[] = taskRows(
      events.events.filter((e) => e.table.catalog === catalog),
      CORES_PER_RUN,
    );
    const duplicates = duplicateRuns(await readLaunches(stateDir));

    tables.send('verify');
    await tables.next('done');
    await tables.exited();
    const after = new Map(
      tables.of<Line>('verify').map((l) => [String(l.table), l.after as TableFigures]),
    );
    const checks: TableCheck[] = tables.of<Line>('table').map((l) => {
      const a = after.get(String(l.table));
      return {
        table: String(l.table),
        size: l.size === 'large' ? 'large' : 'small',
        before: l.before as TableFigures,
        ...(a === undefined ? {} : { after: a }),
      };
    });
    return {
      mode,
      sizing,
      catalog,
      machine: `${machine()}\n1-min load average while maintaining: mean ${(
        loads.reduce((a, b) => a + b, 0) / loads.length
      ).toFixed(1)}, max ${Math.max(...loads).toFixed(1)}`,
      startedAt,
      endedAt: new Date().toISOString(),
      createSeconds,
      maintainMs,
      drained,
      tables: checks,
      rows,
      duplicates,
      ...(model === null ? {} : { model: JSON.parse(model) as unknown }),
    };
  } finally {
    if (tables !== undefined && tables.child.exitCode === null) tables.child.kill('SIGTERM');
    for (const s of services.values()) await s.stop('SIGTERM').catch(() => undefined);
    for (const launch of await readLaunches(stateDir)) await stopRun(launch, stateDir);
    redis?.disconnect();
    await events?.stop().catch(() => undefined);
    await stack.stop().catch((error: unknown) => log(`private stack stop: ${String(error)}`));
    await rm(stack.runDir, { recursive: true, force: true });
  }
}

/**
 * Waits (at most `capMinutes`) until the queue drained: every table has had a merge and a
 * cleanup end, the catalog's queue is empty and no run is without an end — twice in a row
 * 15 s apart (a rescan after a task's commit may still plan). False when the cap came first.
 */
async function settle(
  redis: Redis,
  catalog: string,
  events: TaskEventLog,
  tables: readonly string[],
  capMinutes: number,
  log: (text: string) => void,
  loads: number[],
): Promise<boolean> {
  const deadline = Date.now() + capMinutes * 60_000;
  const base = `${BULLMQ_PREFIX}:${queueNameForCatalog(catalog)}`;
  let quiet = 0;
  let said = '';
  while (Date.now() < deadline) {
    loads.push(loadavg()[0]!);
    const [wait, active, prioritized, delayed] = await Promise.all([
      redis.llen(`${base}:wait`),
      redis.llen(`${base}:active`),
      redis.zcard(`${base}:prioritized`),
      redis.zcard(`${base}:delayed`),
    ]);
    const rows = taskRows(
      events.events.filter((e) => e.table.catalog === catalog),
      CORES_PER_RUN,
    );
    const ended = (type: string) =>
      new Set(rows.filter((r) => r.type === type && r.outcome !== 'running').map((r) => r.table));
    const merged = ended('merge');
    const cleaned = ended('cleanup');
    const pending = tables.filter(
      (t) => !merged.has(`${NAMESPACE}.${t}`) || !cleaned.has(`${NAMESPACE}.${t}`),
    ).length;
    const open = rows.filter((r) => r.outcome === 'running').length;
    const state = `queue ${String(wait + prioritized + delayed)} waiting, ${String(active)} active; ${String(rows.length)} runs, ${String(open)} running; ${String(pending)} tables without both a merge and a cleanup`;
    if (state !== said) log(`  ${state}`);
    said = state;
    quiet = pending === 0 && wait + active + prioritized + delayed + open === 0 ? quiet + 1 : 0;
    if (quiet >= 2) return true;
    await sleep(15_000);
  }
  log(`still busy after ${String(capMinutes)} min; reading the tables anyway`);
  return false;
}
