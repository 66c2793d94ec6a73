// The lake simulator's orchestration (adapters): a private Redis, Kafka and REST catalog
// (with --storage s3: a private S3 store and a REST catalog on it instead),
// the writer process (bench/lake-sim/writer.py, one Spark session), the four Icepack
// services when the policy is `icepack`, a sampler of every table's files and snapshots,
// and the task-event log. Decisions and figures are computed in ./domain/.
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { computeTableState, localPath, ManifestCache, RestCatalog } from '@icepack/iceberg';
import { createLogger, EnvelopeProducer, KafkaClient } from '@icepack/runtime';
import type { ServiceProcess } from '@icepack/runtime/testing';
import {
  catalogPropertyArgs,
  infraEnv,
  ownReadProperties,
  PrivateStack,
  s3Objects,
  startService,
  TaskEventLog,
  type PrivateS3,
  type Service,
} from '@icepack/test';
import {
  BULLMQ_PREFIX,
  createEnvelope,
  queueNameForCatalog,
  serializeEnvelope,
  tableKey,
  Topics,
} from '@icepack/types';
import type { TableId } from '@icepack/types';
import { machine } from '../iceberg/machine.ts';
import {
  duplicateRuns,
  falseLosses,
  icepackCoreSeconds,
  sessionTails,
  taskRows,
  taskTime,
} from './domain/ledger.ts';
import type { ApplicationTaskTimes, Launch } from './domain/ledger.ts';
import { workloadOf } from './domain/options.ts';
import type { Policy, SimOptions } from './domain/options.ts';
import { cronCoreSeconds } from './domain/result.ts';
import type {
  CronRow,
  DeleteRow,
  ProbeRow,
  RunResult,
  Sample,
  TableInfo,
  VerifyRow,
  WriterTotals,
} from './domain/result.ts';

export const SERVICES: readonly Service[] = [
  'provisioner',
  'metadata-scanner',
  'planner',
  'dispatcher',
];
const NAMESPACE = 'lake';
/** The resource group the services run tasks in: the local stack's (one slot, 1+1 cores). */
const SPARK = { driverCores: 1, executorCores: 1, maxExecutors: 1 };
const CORES_PER_RUN = SPARK.driverCores + SPARK.executorCores * SPARK.maxExecutors;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Line = Record<string, unknown> & { kind: string; t: number };

/** Where the simulated lake lives: its catalog, the catalog's client properties, its store. */
export interface Lake {
  readonly catalogUri: string;
  readonly properties: Readonly<Record<string, string>>;
  readonly s3?: PrivateS3;
}

/**
 * What a JSON-lines child process (the writer; the cost benchmark's tables process) said, line
 * by line, and a way to wait for a kind of line.
 */
export class WriterProcess {
  readonly lines: Line[] = [];
  readonly #waiters: { kind: string; resolve: (line: Line) => void }[] = [];
  #exit: Promise<number | null>;
  onLine: (line: Line) => void = () => undefined;
  readonly child: ChildProcessWithoutNullStreams;

  constructor(child: ChildProcessWithoutNullStreams) {
    this.child = child;
    createInterface({ input: child.stdout }).on('line', (text) => {
      if (!text.startsWith('{')) return;
      const line = JSON.parse(text) as Line;
      this.lines.push(line);
      this.onLine(line);
      for (const w of this.#waiters.filter((w) => w.kind === line.kind)) w.resolve(line);
    });
    this.#exit = new Promise((resolve) => child.on('close', (code) => resolve(code)));
  }

  /** Resolves with the first line of `kind`; rejects when the process ends first. */
  async next(kind: string): Promise<Line> {
    const seen = this.lines.find((l) => l.kind === kind);
    if (seen !== undefined) return seen;
    const line = new Promise<Line>((resolve) => this.#waiters.push({ kind, resolve }));
    const ended = this.#exit.then((code) => {
      throw new Error(`the process exited (${String(code)}) before "${kind}"`);
    });
    return Promise.race([line, ended]);
  }

  send(command: string): void {
    this.child.stdin.write(`${command}\n`);
  }

  exited(): Promise<number | null> {
    return this.#exit;
  }

  of<T>(kind: string): T[] {
    return this.lines.filter((l) => l.kind === kind) as unknown as T[];
  }
}

/** One run of the simulator under one policy. Logs progress through `log`. */
export async function runLakeSim(
  options: SimOptions,
  policy: Policy,
  log: (text: string) => void,
): Promise<RunResult> {
  const env = infraEnv();
  const catalog = `sim${randomBytes(4).toString('hex')}`;
  const startedAt = new Date().toISOString();
  const stack = await PrivateStack.start();
  log(`${policy}: private Redis, Kafka, REST catalog at ${stack.runDir}; catalog ${catalog}`);
  const services = new Map<Service, ServiceProcess>();
  let events: TaskEventLog | undefined;
  let kafka: KafkaClient | undefined;
  let producer: EnvelopeProducer | undefined;
  let redis: Redis | undefined;
  let writer: WriterProcess | undefined;
  const samples: Sample[] = [];
  const loads: number[] = [];
  let sampling = true;
  let sampler: Promise<void> = Promise.resolve();
  const stateDir = join(stack.runDir, 'dispatcher');
  try {
    let lake: Lake = { catalogUri: stack.catalogUri, properties: {} };
    if (options.storage === 's3') {
      const s3 = await stack.startS3();
      lake = { catalogUri: s3.catalogUri, properties: s3.properties, s3 };
      log(`${policy}: the lake is on S3: store ${s3.endpoint}, REST catalog ${s3.catalogUri}`);
    }
    const stderr = createWriteStream(join(stack.runDir, 'writer.log'));
    const child = spawn(
      env.python,
      [
        join(import.meta.dirname, 'writer.py'),
        ...['--catalog-uri', lake.catalogUri, '--catalog-name', catalog],
        ...catalogPropertyArgs(lake.properties),
        ...['--namespace', NAMESPACE, '--seed', String(options.seed)],
        ...['--minutes', String(options.minutes), '--policy', policy],
        ...['--cron-minutes', String(options.cronMinutes)],
        ...['--retention-minutes', String(options.retentionMinutes)],
        ...['--probe-every-minutes', String(options.probeEveryMinutes)],
        ...['--load', String(options.load)],
        ...['--max-per-kind', String(options.maxPerKind)],
      ],
      {
        env: {
          ...process.env,
          ICEPACK_SPARK_JARS: env.sparkJars,
          ...lake.s3?.keys,
        },
        stdio: 'pipe',
      },
    );
    child.stderr.pipe(stderr);
    writer = new WriterProcess(child);
    const ready = await writer.next('ready');
    const tables = ready.tables as TableInfo[];
    log(`${policy}: ${String(tables.length)} tables created and loaded (${String(ready.t)} s)`);

    if (policy === 'icepack') {
      events = await startServices(
        stack,
        catalog,
        lake,
        services,
        options.residentIdleSeconds === 0
          ? {}
          : {
              dispatcher: {
                ICEPACK_DISPATCHER_SESSION_IDLE_SECONDS: String(options.residentIdleSeconds),
              },
            },
      );
      kafka = new KafkaClient({
        brokers: [...stack.kafkaBrokers],
        clientId: 'lake-sim',
        logger: createLogger({ service: 'lake-sim', level: 'silent' }),
      });
      producer = new EnvelopeProducer(kafka);
      await producer.connect();
      redis = new Redis(stack.redisUrl, { maxRetriesPerRequest: null });
      const send = producer;
      // Every writer commit is announced as a writer's commit hook would.
      writer.onLine = (line) => {
        if (line.kind !== 'commit') return;
        const id: TableId = { catalog, namespace: [NAMESPACE], name: String(line.table) };
        const envelope = createEnvelope('CommitObserved', tableKey(id), {
          table: id,
          ...(typeof line.snapshotId === 'string' ? { snapshotId: line.snapshotId } : {}),
        });
        send
          .sendRaw(Topics.commits, tableKey(id), serializeEnvelope(envelope), {})
          .catch((error: unknown) => log(`commit event for ${id.name} not sent: ${String(error)}`));
      };
      log(`${policy}: the four services run, bound to ${catalog}`);
    }

    const go = Date.now();
    const catalogClient = new RestCatalog({
      name: catalog,
      uri: lake.catalogUri,
      // This process's own S3 reads (the sampler's): keys given, not from its environment.
      properties: lake.s3 === undefined ? {} : ownReadProperties(lake.s3),
    });
    const cache = new ManifestCache();
    sampler = (async () => {
      while (sampling) {
        const next = Date.now() + options.sampleSeconds * 1000;
        loads.push(loadavg()[0]!);
        samples.push(
          ...(await sweep(catalogClient, cache, catalog, lake, tables, (Date.now() - go) / 1000)),
        );
        while (sampling && Date.now() < next) await sleep(500);
      }
    })();
    writer.send('go');
    log(`${policy}: writing for ${String(options.minutes)} min`);
    const done = await writer.next('writes-done');
    log(
      `${policy}: writers done: ${String(done.commits)} commits, ${String(done.failures)} failed attempts`,
    );
    if (policy === 'icepack') {
      await settle(redis!, catalog, events!, options.settleMinutes * 60_000, log);
    }
    writer.send('verify');
    await writer.next('done');
    await writer.exited();
    sampling = false;
    await sampler;
    samples.push(
      ...(await sweep(catalogClient, cache, catalog, lake, tables, (Date.now() - go) / 1000)),
    );

    for (const s of [...services.values()].reverse()) await s.stop('SIGTERM');
    services.clear();
    const launches = await readLaunches(stateDir);
    const ours = (events?.events ?? []).filter((e) => e.table.catalog === catalog);
    const tasks = taskRows(ours, CORES_PER_RUN);
    const tails = (events?.tails ?? []).filter((t) => t.table.catalog === catalog);
    const cron = writer.of<CronRow>('cron');
    const totals = done as unknown as Omit<WriterTotals, 'failuresByError'>;
    const failuresByError: Record<string, number> = {};
    for (const f of writer.of<{ error: string }>('failure')) {
      failuresByError[f.error] = (failuresByError[f.error] ?? 0) + 1;
    }
    return {
      policy,
      options: workloadOf(options),
      catalog,
      machine: `${machine()}\n1-min load average during the run: mean ${(
        loads.reduce((a, b) => a + b, 0) / Math.max(1, loads.length)
      ).toFixed(1)}, max ${Math.max(0, ...loads).toFixed(1)}`,
      startedAt,
      endedAt: new Date().toISOString(),
      tables,
      samples,
      writes: {
        commits: totals.commits,
        failures: totals.failures,
        gaveUp: totals.gaveUp,
        skipped: totals.skipped,
        failuresByError,
        perTable: totals.perTable,
      },
      probes: writer.of<ProbeRow>('probe'),
      deletes: writer.of<DeleteRow>('deletes'),
      cron,
      tasks,
      sessionTails: sessionTails(tails),
      taskTime: taskTime(await readTaskTimes(stateDir), CORES_PER_RUN),
      taskEvents: ours.length,
      duplicates: duplicateRuns(launches),
      falseLosses: falseLosses(ours, launches),
      lifecycle: events?.lifecycleViolations() ?? [],
      verify: writer.of<VerifyRow>('verify'),
      coreSeconds: policy === 'icepack' ? icepackCoreSeconds(tasks, tails) : cronCoreSeconds(cron),
    };
  } finally {
    sampling = false;
    await sampler.catch(() => undefined);
    if (writer !== undefined && writer.child.exitCode === null) writer.child.kill('SIGTERM');
    for (const s of services.values()) await s.stop('SIGTERM').catch(() => undefined);
    for (const launch of await readLaunches(stateDir)) await stopRun(launch, stateDir);
    redis?.disconnect();
    await producer?.disconnect().catch(() => undefined);
    await kafka?.close().catch(() => undefined);
    await events?.stop().catch(() => undefined);
    await stack.stop().catch((error: unknown) => log(`private stack stop: ${String(error)}`));
    await rm(stack.runDir, { recursive: true, force: true });
  }
}

/**
 * The four services on the private stack, at their defaults, bound to `catalog` only;
 * `overrides` adds settings per service (the cost benchmark's batch and sizing modes).
 */
export async function startServices(
  stack: PrivateStack,
  catalog: string,
  lake: Lake,
  running: Map<Service, ServiceProcess>,
  overrides: Partial<Record<Service, Record<string, string>>> = {},
): Promise<TaskEventLog> {
  await stack.writeBootstrap(
    catalog,
    {
      cpu: '2',
      memory: '4Gi',
      slots: 1,
      spark: { ...SPARK, driverMemory: '1g', executorMemory: '1g' },
    },
    { uri: lake.catalogUri, properties: lake.properties },
  );
  const token = randomBytes(24).toString('hex');
  const extra: Record<Service, Record<string, string>> = {
    provisioner: {
      ICEPACK_PROVISIONER_MODE: 'local',
      ICEPACK_BOOTSTRAP_FILE: stack.bootstrapFile,
      ICEPACK_LOCAL_CPU: '2',
      ICEPACK_LOCAL_MEMORY: '8Gi',
    },
    'metadata-scanner': {},
    planner: {},
    dispatcher: { ICEPACK_DISPATCHER_STATE_DIR: join(stack.runDir, 'dispatcher') },
  };
  const start = async (service: Service) => {
    const env = {
      ...stack.serviceEnv(service, token),
      // The simulator's catalog keeps its tables on this machine's disk, as the local stack
      // does; on S3 the services (and the dispatcher's Spark jobs) read the keys from here.
      ...(lake.s3 === undefined ? { ICEPACK_LOCAL_CATALOGS: '*' } : lake.s3.keys),
      ...extra[service],
      ...overrides[service],
    };
    await startService(service, env, running, 180_000);
  };
  // The provisioner creates the topics; the others start once they exist.
  await start(SERVICES[0]!);
  const events = await TaskEventLog.start(stack.kafkaBrokers);
  await Promise.all(SERVICES.slice(1).map(start));
  return events;
}

/** Every table's figures now, from the REST catalog and its manifests (no Spark). */
async function sweep(
  client: RestCatalog,
  cache: ManifestCache,
  catalog: string,
  lake: Lake,
  tables: readonly TableInfo[],
  t: number,
): Promise<Sample[]> {
  const out: Sample[] = [];
  for (const table of tables) {
    try {
      const loaded = await client.loadTable({ catalog, namespace: [NAMESPACE], name: table.name });
      if (loaded.status !== 'loaded') continue;
      const state = await computeTableState(loaded.table, { cache });
      const f = state.files;
      out.push({
        t: Math.round(t),
        table: table.name,
        dataFiles: f.dataFiles,
        smallFiles: f.smallFiles,
        deleteFiles: f.positionDeleteFiles + f.equalityDeleteFiles + f.deletionVectors,
        snapshots: state.snapshots.total,
        metadataBytes:
          lake.s3 === undefined
            ? await directoryBytes(join(localPath(loaded.table.metadata.location), 'metadata'))
            : await s3PrefixBytes(lake.s3, `${loaded.table.metadata.location}/metadata/`),
      });
    } catch {
      // A table mid-commit (a manifest not yet written) is sampled again next sweep.
    }
  }
  return out;
}

async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    total += await stat(join(dir, name)).then(
      (s) => s.size,
      () => 0,
    );
  }
  return total;
}

/** Bytes of the objects under an `s3://bucket/prefix/` location, listed through the S3 API. */
async function s3PrefixBytes(s3: PrivateS3, location: string): Promise<number> {
  return (await s3Objects(s3, location)).reduce((total, object) => total + object.size, 0);
}

/**
 * After the writers stop, wait (at most `capMs`) until Icepack is quiet: the catalog's queue
 * empty and no run without an end, twice in a row 30 s apart (a last scan may still plan).
 */
async function settle(
  redis: Redis,
  catalog: string,
  events: TaskEventLog,
  capMs: number,
  log: (text: string) => void,
): Promise<void> {
  const deadline = Date.now() + capMs;
  const base = `${BULLMQ_PREFIX}:${queueNameForCatalog(catalog)}`;
  let quiet = 0;
  while (Date.now() < deadline) {
    const [wait, active, prioritized, delayed] = await Promise.all([
      redis.llen(`${base}:wait`),
      redis.llen(`${base}:active`),
      redis.zcard(`${base}:prioritized`),
      redis.zcard(`${base}:delayed`),
    ]);
    const open = taskRows(events.events, CORES_PER_RUN).filter((r) => r.outcome === 'running');
    quiet = wait + active + prioritized + delayed + open.length === 0 ? quiet + 1 : 0;
    if (quiet >= 2) return;
    await sleep(30_000);
  }
  log(`icepack: still busy after ${String(capMs / 60_000)} min of settling; checking anyway`);
}

/** Every launch of the local runner, with when and how its result was written. */
export async function readLaunches(stateDir: string): Promise<Launch[]> {
  const all: Launch[] = [];
  for (const run of await readdir(stateDir).catch(() => [] as string[])) {
    const dir = join(stateDir, run);
    const text = await readFile(join(dir, 'runs.log'), 'utf8').catch(() => '');
    const result = await readFile(join(dir, 'result.json'), 'utf8').catch(() => undefined);
    const endedAt = await stat(join(dir, 'result.json')).then(
      (s) => s.mtimeMs,
      () => undefined,
    );
    let ok: boolean | undefined;
    try {
      ok = result === undefined ? undefined : (JSON.parse(result) as { ok: boolean }).ok === true;
    } catch {
      ok = false;
    }
    for (const line of text.split('\n').filter((l) => l.trim() !== '')) {
      const launch = JSON.parse(line) as Launch;
      all.push({
        ...launch,
        ...(endedAt === undefined ? {} : { endedAt }),
        ...(ok === undefined ? {} : { ok }),
      });
    }
  }
  return all.sort((a, b) => a.startedAt - b.startedAt);
}

/**
 * Each run directory's tasks as the job timed them (`durationMs`): a batch's or resident
 * session's summary (`results/batch.json`), else the single run's `result.json`. A directory
 * without either (a run that wrote no result) counts no task.
 */
export async function readTaskTimes(stateDir: string): Promise<ApplicationTaskTimes[]> {
  const durations = (value: unknown): number[] =>
    typeof value === 'number' && Number.isFinite(value) && value >= 0 ? [value] : [];
  const read = async (path: string): Promise<unknown> => {
    try {
      return JSON.parse(await readFile(path, 'utf8')) as unknown;
    } catch {
      return undefined;
    }
  };
  const apps: ApplicationTaskTimes[] = [];
  for (const runId of await readdir(stateDir).catch(() => [] as string[])) {
    const dir = join(stateDir, runId);
    const batch = (await read(join(dir, 'results', 'batch.json'))) as
      { tasks?: Record<string, { durationMs?: unknown }> } | undefined;
    const single =
      batch === undefined
        ? ((await read(join(dir, 'result.json'))) as { durationMs?: unknown } | undefined)
        : undefined;
    const durationsMs =
      batch !== undefined
        ? Object.values(batch.tasks ?? {}).flatMap((t) => durations(t.durationMs))
        : durations(single?.durationMs);
    apps.push({ runId, durationsMs });
  }
  return apps;
}

/** Stops a detached Spark run left behind, if its pid is still that run. */
export async function stopRun(launch: Launch, stateDir: string): Promise<void> {
  const { pid } = launch;
  if (pid === undefined) return;
  const cmdline = await readFile(`/proc/${String(pid)}/cmdline`, 'utf8').catch(() => '');
  if (!cmdline.includes(stateDir)) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Gone meanwhile.
  }
}
