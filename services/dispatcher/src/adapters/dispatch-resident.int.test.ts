// A resident maintenance session (ADR 0045) on the local runner, on real Spark, the REST
// catalog, Redis and Kafka: a task that arrives while a batch application of its catalog is
// alive runs in that application; a task appended just after the application closed its inbox
// is launched normally, once; a dispatcher killed right before or right after renaming a task
// into the inbox loses no task and runs none twice; a session fed a stream of tasks stops taking
// them in time to finish them inside its task timeout; a lone task that leads a session is
// reported as its result appears, while the application idles on (ADR 0046), also when its
// dispatcher is killed right after that report; and the session's idle tail after its last
// task is reported at the exit as its own ledger entry, the same again by a dispatcher killed
// right after reporting it. The tables of every test are built in one Spark
// session and read back in one more.
import type { ChildProcess } from 'node:child_process';
import { access, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RestCatalog } from '@icepack/iceberg';
import { createLogger } from '@icepack/runtime';
import { tempDir } from '@icepack/test';
import {
  assertEventLifecycle,
  BULLMQ_PREFIX,
  MAX_TASK_GROUPS,
  queueNameForCatalog,
  taskJobId,
  type SessionTail,
  type Task,
  type TaskEvent,
} from '@icepack/types';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ResidentSettings } from '../domain/resident-session.ts';
import { processAlive } from '../runners/local-process.ts';
import { LocalRunner } from '../runners/local-runner.ts';
import { taskHash } from '../runners/run-key.ts';
import type { BatchRunKey, BatchTask, SparkRunner } from '../runners/spark-runner.ts';
import { LocalBudgetQuota } from './quota.ts';
import { CatalogTableHealth } from './table-health.ts';
import type { DispatchSink } from './task-events.ts';
import { TaskWorker } from './task-worker.ts';
import {
  dispatchTableSets,
  type DispatchTableTarget,
  type DispatchTruth,
} from './testing/dispatch-tables.ts';
import { cleanupTask, mergeTask } from './testing/sample-tasks.ts';
import { TaskEventLog } from './testing/task-event-log.ts';
import { testBinding } from './testing/test-binding.ts';
import { SPARK_RUN_POLL, until } from './testing/until.ts';
import { WorkerProcesses } from './testing/worker-processes.ts';

const infra = inject('infra');
const suffix = Math.random().toString(36).slice(2, 8);
const KEY = 'unpartitioned-small-files';
const logger = createLogger({ service: 'dispatch-resident-test', level: 'warn' });
const sparkOptions = {
  python: infra.python,
  catalogUri: infra.catalogUri,
  sparkJars: infra.sparkJars,
};
/** The worker processes' log: removed after the afterAll below, which waits for their exit. */
const workerLogDir = tempDir('icepack-dispatch-resident-');
const workers = new WorkerProcesses(join(workerLogDir, 'workers.log'), {
  catalogUri: infra.catalogUri,
  redisUrl: infra.redisUrl,
  brokers: infra.kafkaBrokers,
  lockMs: 4_000,
  runner: 'local',
  batch: true,
});

/** Each test's catalog (its queue, its worker) with two small tables of its own. */
const cases = {
  same: `ressame${suffix}`,
  closed: `resclosed${suffix}`,
  crashBefore: `rescrashb${suffix}`,
  crashAfter: `rescrasha${suffix}`,
} as const;
type Case = keyof typeof cases;
/** Each lone-task test's catalog, with one small table of its own. */
const lones = {
  lone: `reslone${suffix}`,
  crashLeader: `rescrashl${suffix}`,
  crashTail: `rescrasht${suffix}`,
} as const;
type Lone = keyof typeof lones;
/** The stream's catalog: its tables take a task each in turn, of each type and group id. */
const streamCatalog = `resstream${suffix}`;
const STREAM_TABLES = 8;
const targets = [
  ...Object.values(cases).flatMap((catalogName) =>
    [1, 2].map((n) => ({ catalogName, prefix: `${catalogName}_${String(n)}` })),
  ),
  ...Object.values(lones).map((catalogName) => ({ catalogName, prefix: `${catalogName}_1` })),
  ...Array.from({ length: STREAM_TABLES }, (_, n) => ({
    catalogName: streamCatalog,
    prefix: `${streamCatalog}_${String(n + 1)}`,
  })),
] satisfies DispatchTableTarget[];

let built: Record<Case, [DispatchTruth, DispatchTruth]>;
let lone: Record<Lone, DispatchTruth>;
let streamTables: DispatchTruth[];
let redis: Redis;
const cleanups: (() => Promise<void>)[] = [];

function truthOf(set: Record<string, DispatchTruth> | undefined): DispatchTruth {
  const t = set?.[KEY];
  if (t === undefined) throw new Error(`no truth for ${KEY}`);
  return t;
}

beforeAll(async () => {
  const sets = await dispatchTableSets([KEY], sparkOptions, targets);
  built = Object.fromEntries(
    (Object.keys(cases) as Case[]).map((c, i) => [
      c,
      [truthOf(sets[2 * i]), truthOf(sets[2 * i + 1])],
    ]),
  ) as typeof built;
  const caseCount = Object.keys(cases).length;
  const loneNames = Object.keys(lones) as Lone[];
  lone = Object.fromEntries(
    loneNames.map((l, i) => [l, truthOf(sets[2 * caseCount + i])]),
  ) as typeof lone;
  const first = 2 * caseCount + loneNames.length;
  streamTables = Array.from({ length: STREAM_TABLES }, (_, n) => truthOf(sets[first + n]));
  redis = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
}, 900_000);

afterAll(async () => {
  await workers.killAll();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  redis.disconnect();
});

class RecordingSink implements DispatchSink {
  readonly events: TaskEvent[] = [];
  readonly tails: SessionTail[] = [];

  taskEvent(event: TaskEvent): Promise<void> {
    this.events.push(event);
    return Promise.resolve();
  }

  sessionTail(tail: SessionTail): Promise<void> {
    this.tails.push(tail);
    return Promise.resolve();
  }

  requestScan(): Promise<void> {
    return Promise.resolve();
  }

  of(taskId: string): TaskEvent[] {
    return this.events.filter((e) => e.taskId === taskId);
  }
}

function queueOf(catalog: string): Queue {
  const queue = new Queue(queueNameForCatalog(catalog), {
    connection: redis,
    prefix: BULLMQ_PREFIX,
  });
  cleanups.push(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
  });
  return queue;
}

function enqueue(queue: Queue, task: Task): Promise<unknown> {
  return queue.add(task.type, task, {
    jobId: task.id,
    priority: 1,
    removeOnComplete: true,
    removeOnFail: true,
  });
}

/** One in-process worker with one slot: its one task leads, the rest come by appends. */
async function residentWorker(
  catalog: string,
  runner: SparkRunner,
  sink: DispatchSink,
  resident: ResidentSettings,
  timeoutMs = 15 * 60_000,
): Promise<TaskWorker> {
  const worker = new TaskWorker({
    binding: testBinding(catalog, { slots: 1, smallSlots: 0 }),
    connection: redis,
    runner,
    quota: new LocalBudgetQuota({ redis, prefix: `resident-${catalog}` }),
    sink,
    health: new CatalogTableHealth(() => new RestCatalog({ name: catalog, uri: infra.catalogUri })),
    catalog: { name: catalog, uri: infra.catalogUri },
    logger,
    backoffMs: 200,
    timeoutMs,
    batch: {},
    resident,
  });
  cleanups.push(() => worker.close(true));
  await worker.start();
  return worker;
}

/** The run directory under `stateDir` that holds `task`'s result, once one does. */
async function resultDir(stateDir: string, task: Task): Promise<string> {
  let found: string | undefined;
  await until(
    `a result of ${task.id}`,
    async () => {
      found = (await dirsWithResult(stateDir, task))[0];
      return found !== undefined;
    },
    SPARK_RUN_POLL,
  );
  return found!;
}

/** Every run directory under `stateDir` holding a result of `task`. */
async function dirsWithResult(stateDir: string, task: Task): Promise<string[]> {
  const out: string[] = [];
  for (const d of (await readdir(stateDir).catch((): string[] => [])).sort()) {
    const results = await readdir(join(stateDir, d, 'results')).catch((): string[] => []);
    if (results.includes(`${taskHash(task.id)}.json`)) out.push(join(stateDir, d));
  }
  return out;
}

async function launchesIn(dir: string): Promise<{ taskRuns: string[]; resident?: true }[]> {
  const lines = (await readFile(join(dir, 'runs.log'), 'utf8')).trim().split('\n');
  return lines.map((l) => JSON.parse(l) as { taskRuns: string[]; resident?: true });
}

async function result(
  dir: string,
  task: Task,
): Promise<{ ok: boolean; durationMs: number; idleMs?: number }> {
  return JSON.parse(await readFile(join(dir, 'results', `${taskHash(task.id)}.json`), 'utf8')) as {
    ok: boolean;
    durationMs: number;
    idleMs?: number;
  };
}

function jobsDone(queue: Queue, tasks: readonly Task[]): Promise<void> {
  return until(
    'every job to be done',
    async () =>
      (await Promise.all(tasks.map((t) => queue.getJob(t.id)))).every((j) => j === undefined),
    SPARK_RUN_POLL,
  );
}

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

describe('a task that arrives while its catalog has a live session', () => {
  const catalog = cases.same;
  const sink = new RecordingSink();
  let tasks: [Task, Task];
  let stateDir: string;
  let dir: string;

  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'icepack-resident-same-'));
    cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
    tasks = [mergeTask(built.same[0], 5), mergeTask(built.same[1], 5)];
    const queue = queueOf(catalog);
    await enqueue(queue, tasks[0]);
    // Idle long enough that the second task surely finds the session alive; the session
    // closes once it took both (maxTasks), not after the idle bound.
    await residentWorker(catalog, new LocalRunner({ stateDir, pollMs: 500 }), sink, {
      idleSeconds: 600,
      maxTasks: 2,
    });
    dir = await resultDir(stateDir, tasks[0]);
    await enqueue(queue, tasks[1]);
    await jobsDone(queue, tasks);
  }, 1_200_000);

  it('runs in the same Spark application: one spark-submit, a result for each task', async () => {
    expect(await readdir(stateDir)).toHaveLength(1);
    const launches = await launchesIn(dir);
    expect(launches).toHaveLength(1);
    // Launched with the first task only: the second came by the inbox.
    expect(launches[0]!.taskRuns.map((r) => r.split('@')[0])).toEqual([tasks[0].id]);
    expect(launches[0]!.resident).toBe(true);
    for (const task of tasks) expect((await result(dir, task)).ok).toBe(true);
    // The session took its two tasks and closed its inbox.
    expect(await exists(join(dir, 'inbox.closed'))).toBe(true);
    expect(await exists(join(dir, 'inbox'))).toBe(false);
  });

  it('reports each task once, under the application, with its held idle time in its cost', async () => {
    const runId = dir.split('/').at(-1);
    for (const task of tasks) {
      const mine = sink.of(task.id);
      assertEventLifecycle(mine);
      expect(mine.map((e) => e.status)).toEqual(['started', 'succeeded']);
      expect(mine.every((e) => e.runId === runId)).toBe(true);
      const own = await result(dir, task);
      // Its own run time plus the time the session waited, held, before it (ADR 0045).
      expect(mine[1]!.cost?.runMs).toBe(own.durationMs + (own.idleMs ?? 0));
      expect(mine[1]!.cost?.filesRewritten).toBeGreaterThan(0);
    }
    // The second task waited in the held session for its append.
    expect((await result(dir, tasks[1])).idleMs).toBeGreaterThan(0);
  });
});

/** A local runner whose appends come just too late: each waits for the inbox to be closed. */
class LateAppendRunner extends LocalRunner {
  override async appendToBatch(key: BatchRunKey, tasks: readonly BatchTask[]): Promise<boolean> {
    await until('the inbox to close', () => exists(join(this.batchDir(key), 'inbox.closed')), {
      ...SPARK_RUN_POLL,
    });
    return super.appendToBatch(key, tasks);
  }
}

describe('a task appended after the session closed its inbox', () => {
  const catalog = cases.closed;
  const sink = new RecordingSink();
  let tasks: [Task, Task];
  let stateDir: string;

  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'icepack-resident-closed-'));
    cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
    tasks = [mergeTask(built.closed[0], 5), mergeTask(built.closed[1], 5)];
    const queue = queueOf(catalog);
    await enqueue(queue, tasks[0]);
    await residentWorker(catalog, new LateAppendRunner({ stateDir, pollMs: 500 }), sink, {
      idleSeconds: 3,
      maxTasks: 10,
    });
    await resultDir(stateDir, tasks[0]);
    await enqueue(queue, tasks[1]);
    await jobsDone(queue, tasks);
  }, 1_200_000);

  it('is refused by the closed inbox and launched in an application of its own, once', async () => {
    const dirs = (await readdir(stateDir)).sort();
    expect(dirs).toHaveLength(2);
    const [first] = await dirsWithResult(stateDir, tasks[0]);
    const second = await dirsWithResult(stateDir, tasks[1]);
    // Exactly one result of the late task, in the other application than the first task's.
    expect(second).toHaveLength(1);
    expect(second[0]).not.toBe(first);
    expect((await result(second[0]!, tasks[1])).ok).toBe(true);
    // Nothing was left in the first application's closed inbox: the rename never happened.
    expect(await readdir(join(first!, 'inbox.closed'))).toEqual([]);
    for (const d of dirs) expect(await launchesIn(join(stateDir, d))).toHaveLength(1);
    const late = sink.of(tasks[1].id);
    assertEventLifecycle(late);
    // Its refused append's `started` is repeated by its own launch's; one end.
    expect(late.filter((e) => e.status === 'succeeded')).toHaveLength(1);
    expect(late.at(-1)?.runId).toBe(second[0]!.split('/').at(-1));
  });
});

function exited(child: ChildProcess): Promise<void> {
  return new Promise((ok) => {
    if (child.exitCode !== null || child.signalCode !== null) ok();
    else child.once('exit', () => ok());
  });
}

describe.each([
  ['before', 'crashBefore', 'before-rename'],
  ['after', 'crashAfter', 'after-rename'],
] as const)(
  'a dispatcher killed right %s renaming an appended task into the inbox',
  (_, which, crashAtAppend) => {
    const catalog = cases[which];
    let events: TaskEventLog;
    let tasks: [Task, Task];
    let stateDir: string;

    beforeAll(async () => {
      events = new TaskEventLog(infra.kafkaBrokers, (e) => e.table.catalog === catalog);
      await events.start();
      cleanups.push(() => events.stop());
      stateDir = await mkdtemp(join(tmpdir(), `icepack-resident-${which}-`));
      cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
      tasks = [mergeTask(built[which][0], 5), mergeTask(built[which][1], 5)];
      const queue = queueOf(catalog);
      await enqueue(queue, tasks[0]);
      // A short idle bound: after the crash no one appends, and the session idles out.
      const resident = { idleSeconds: 10, maxTasks: 2 };
      const first = await workers.start({
        stateDir,
        catalogName: catalog,
        resident,
        crashAtAppend,
      });
      await resultDir(stateDir, tasks[0]);
      await enqueue(queue, tasks[1]);
      // It kills itself at the append.
      await exited(first);
      await workers.start({ stateDir, catalogName: catalog, resident });
      await jobsDone(queue, tasks);
    }, 1_200_000);

    it('loses no task and runs none twice', async () => {
      for (const task of tasks) {
        await events.waitFor(task.id, ['succeeded', 'failed']);
        events.expectLifecycle(task.id);
        const mine = events.of(task.id);
        // Ended by one run: a report may repeat (events are at least once — a lock lapsed on
        // a loaded machine reports the recorded end again), never come from two runs.
        const succeeded = mine.filter((e) => e.status === 'succeeded');
        expect(succeeded.length).toBeGreaterThan(0);
        expect(new Set(succeeded.map((e) => `${String(e.runId)}#${String(e.attempt)}`)).size).toBe(
          1,
        );
        // One result, ever: a second run would have left a second result file.
        const dirs = await dirsWithResult(stateDir, task);
        expect(dirs).toHaveLength(1);
        expect((await result(dirs[0]!, task)).ok).toBe(true);
        // One commit: a second run would have found the one file left and committed nothing
        // more, a lost task none at all.
        const done = mine.find((e) => e.status === 'succeeded')!;
        expect(done.after?.dataFiles).toBe(1);
      }
      // Each application launched once.
      for (const d of await readdir(stateDir))
        expect(await launchesIn(join(stateDir, d))).toHaveLength(1);
      const appended = await dirsWithResult(stateDir, tasks[1]);
      const leader = await dirsWithResult(stateDir, tasks[0]);
      if (crashAtAppend === 'after-rename') {
        // Renamed in: the live session ran it; the restarted dispatcher only reported it.
        expect(appended).toEqual(leader);
        expect(await readdir(stateDir)).toHaveLength(1);
      } else {
        // Recorded, never renamed: the session never had it. It ended lost when the session
        // exited and ran as a retry in an application of its own.
        expect(appended).not.toEqual(leader);
        expect(events.of(tasks[1].id).map((e) => e.status)).toContain('retrying');
      }
    });
  },
);

/** What a session's application looked like at a moment: alive, closed, its leader's job. */
interface SessionLook {
  /** The spark-submit process still runs. */
  readonly alive: boolean;
  /** The job wrote its summary (`results/batch.json`): it closed its inbox and is ending. */
  readonly summary: boolean;
}

/** The one application's run directory under `stateDir`, and how it looks now. */
async function lookAt(stateDir: string): Promise<SessionLook> {
  const [name] = await readdir(stateDir);
  const dir = join(stateDir, name!);
  const record = JSON.parse(await readFile(join(dir, 'pid'), 'utf8')) as {
    pid: number;
    startTicks?: number;
  };
  return {
    alive: await processAlive(record, dir),
    summary: await exists(join(dir, 'results', 'batch.json')),
  };
}

/** A recording sink that looks at the session (and the leader's job) at each `succeeded`. */
class LookingSink extends RecordingSink {
  readonly atSucceeded: (SessionLook & { jobState: string; claims: number })[] = [];
  readonly #look: () => Promise<SessionLook & { jobState: string; claims: number }>;

  constructor(look: () => Promise<SessionLook & { jobState: string; claims: number }>) {
    super();
    this.#look = look;
  }

  override async taskEvent(event: TaskEvent): Promise<void> {
    if (event.status === 'succeeded') this.atSucceeded.push(await this.#look());
    return super.taskEvent(event);
  }
}

describe('a lone task that leads a session (ADR 0046)', () => {
  const catalog = lones.lone;
  let sink: LookingSink;
  let task: Task;
  let stateDir: string;

  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'icepack-resident-lone-'));
    cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
    task = mergeTask(lone.lone, 5);
    const queue = queueOf(catalog);
    sink = new LookingSink(async () => ({
      ...(await lookAt(stateDir)),
      jobState: await queue.getJobState(task.id),
      // The worker's quota claims (residentWorker's LocalBudgetQuota).
      claims: await redis.hlen(`resident-${catalog}:budget:${catalog}`),
    }));
    await enqueue(queue, task);
    // Nothing else comes: the session idles this long after the task, then exits.
    await residentWorker(catalog, new LocalRunner({ stateDir, pollMs: 500 }), sink, {
      idleSeconds: 30,
      maxTasks: 10,
    });
    await jobsDone(queue, [task]);
  }, 1_200_000);

  it('is reported succeeded while the application idles on, its job holding the slot and the claim', async () => {
    const mine = sink.of(task.id);
    assertEventLifecycle(mine);
    expect(mine.map((e) => e.status)).toEqual(['started', 'succeeded']);
    // Before the change the leader was reported once the application had exited and its job
    // had given its claim back.
    expect(sink.atSucceeded).toEqual([
      { alive: true, summary: false, jobState: 'active', claims: 1 },
    ]);
    // Its job ended when the application did: gone now, the process too, the summary written.
    expect(await lookAt(stateDir)).toEqual({ alive: false, summary: true });
  });

  it('carries its own run in its ledger entry, as a member does; one launch, one result', async () => {
    const [name] = await readdir(stateDir);
    const dir = join(stateDir, name!);
    expect(await readdir(stateDir)).toHaveLength(1);
    expect(await launchesIn(dir)).toHaveLength(1);
    const own = await result(dir, task);
    expect(own.ok).toBe(true);
    const done = sink.of(task.id)[1]!;
    expect(done.runId).toBe(name);
    expect(done.cost?.runMs).toBe(own.durationMs + (own.idleMs ?? 0));
    expect(done.cost?.filesRewritten).toBeGreaterThan(0);
  });

  it("reports the session's idle tail at the exit, once, as its own entry under the leader's run", async () => {
    const [name] = await readdir(stateDir);
    const summary = JSON.parse(
      await readFile(join(stateDir, name!, 'results', 'batch.json'), 'utf8'),
    ) as { exitCode: number; idleMs?: number };
    expect(summary.exitCode).toBe(0);
    expect(summary.idleMs).toBeGreaterThan(0);
    // Before the change that tail was only logged: in no ledger entry.
    expect(sink.tails).toHaveLength(1);
    const [tail] = sink.tails;
    const done = sink.of(task.id)[1]!;
    expectTail(tail!, task, name!, summary.idleMs!, done);
    // Within its bound: the session's cores × its idle bound, and the job's poll.
    const cores = coresOf(done);
    expect(tail!.cost.coreSecondsRequested).toBeLessThanOrEqual(cores * (30 + 5));
  });
});

/** The cores the leader's run was sized for: its ledger cost ÷ its run time. */
function coresOf(leader: TaskEvent): number {
  const { runMs, coreSecondsRequested } = leader.cost!;
  return Math.round((coreSecondsRequested * 1000) / runMs);
}

/** A session tail of the leader's task, run and table: the summary's idle × the session's cores. */
function expectTail(
  tail: SessionTail,
  leader: Task,
  runId: string,
  idleMs: number,
  done: TaskEvent,
): void {
  expect(tail).toMatchObject({
    taskId: leader.id,
    table: leader.table,
    taskType: leader.type,
    runId,
    idleMs: Math.round(idleMs),
    cost: { runMs: Math.round(idleMs) },
  });
  expect(tail.cost.coreSecondsRequested).toBeGreaterThan(0);
  expect(tail.cost.coreSecondsRequested).toBeCloseTo(
    (coresOf(done) * Math.round(idleMs)) / 1000,
    2,
  );
  // After the leader's run: the application exited after its result.
  expect(Date.parse(tail.at)).toBeGreaterThanOrEqual(Date.parse(done.at));
}

describe("a dispatcher killed right after reporting its session's idle tail", () => {
  const catalog = lones.crashTail;
  let events: TaskEventLog;
  let task: Task;
  let stateDir: string;

  beforeAll(async () => {
    events = new TaskEventLog(infra.kafkaBrokers, (e) => e.table.catalog === catalog);
    await events.start();
    cleanups.push(() => events.stop());
    stateDir = await mkdtemp(join(tmpdir(), 'icepack-resident-crasht-'));
    cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
    task = mergeTask(lone.crashTail, 5);
    const queue = queueOf(catalog);
    await enqueue(queue, task);
    const resident = { idleSeconds: 10, maxTasks: 10 };
    // It kills itself right after publishing the tail, before its job is completed.
    const first = await workers.start({
      stateDir,
      catalogName: catalog,
      resident,
      crashAfterTail: true,
    });
    await exited(first);
    await workers.start({ stateDir, catalogName: catalog, resident });
    await jobsDone(queue, [task]);
  }, 1_200_000);

  it('has the next dispatcher report the same tail again (the ledger keeps one), the task run once', async () => {
    await events.waitFor(task.id, ['succeeded', 'failed']);
    events.expectLifecycle(task.id);
    const mine = events.of(task.id);
    expect(mine.map((e) => e.status)).not.toContain('failed');
    const succeeded = mine.filter((e) => e.status === 'succeeded');
    const dirs = await dirsWithResult(stateDir, task);
    expect(dirs).toHaveLength(1);
    expect(await readdir(stateDir)).toHaveLength(1);
    expect(await launchesIn(dirs[0]!)).toHaveLength(1);
    const runId = dirs[0]!.split('/').at(-1)!;
    const summary = JSON.parse(await readFile(join(dirs[0]!, 'results', 'batch.json'), 'utf8')) as {
      exitCode: number;
      idleMs?: number;
    };
    expect(summary.exitCode).toBe(0);
    // Reported by the killed dispatcher and again by the next one: the same tail, to the
    // millisecond (its exit time recorded on the job before the report), which the ledger's
    // marker per task, run and kind keeps once (ledger-store.int.test.ts, convergence).
    await until(
      'the tail reported again',
      () => Promise.resolve(events.tails.length >= 2),
      SPARK_RUN_POLL,
    );
    expect(new Set(events.tails.map((t) => JSON.stringify(t))).size).toBe(1);
    expectTail(events.tails[0]!, task, runId, summary.idleMs!, succeeded[0]!);
    expect(events.tails[0]!.cost.coreSecondsRequested).toBeLessThanOrEqual(
      coresOf(succeeded[0]!) * (10 + 5),
    );
  });
});

describe("a dispatcher killed right after its session leader's report, before the exit", () => {
  const catalog = lones.crashLeader;
  let events: TaskEventLog;
  let task: Task;
  let stateDir: string;
  let atCrash: SessionLook;

  beforeAll(async () => {
    events = new TaskEventLog(infra.kafkaBrokers, (e) => e.table.catalog === catalog);
    await events.start();
    cleanups.push(() => events.stop());
    stateDir = await mkdtemp(join(tmpdir(), 'icepack-resident-crashl-'));
    cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
    task = mergeTask(lone.crashLeader, 5);
    const queue = queueOf(catalog);
    await enqueue(queue, task);
    const resident = { idleSeconds: 30, maxTasks: 10 };
    // It kills itself right after publishing the task's outcome event.
    const first = await workers.start({
      stateDir,
      catalogName: catalog,
      resident,
      crashAfterOutcome: true,
    });
    await exited(first);
    atCrash = await lookAt(stateDir);
    await workers.start({ stateDir, catalogName: catalog, resident });
    await jobsDone(queue, [task]);
    // The session idles out on its own: nobody appends to it any more.
    await until('the session to end', async () => (await lookAt(stateDir)).summary, SPARK_RUN_POLL);
  }, 1_200_000);

  it('died while the application lived, and the task is neither run again nor lost', async () => {
    // Killed at the leader's report, which came before the application's exit (before the
    // change it came after: the summary was written and the process gone).
    expect(atCrash).toEqual({ alive: true, summary: false });
    await events.waitFor(task.id, ['succeeded', 'failed']);
    events.expectLifecycle(task.id);
    const mine = events.of(task.id);
    expect(mine.map((e) => e.status)).not.toContain('failed');
    expect(mine.map((e) => e.status)).not.toContain('retrying');
    // Reported by the killed dispatcher and again by the next one (events are at least once),
    // both from the one run.
    const succeeded = mine.filter((e) => e.status === 'succeeded');
    expect(succeeded.length).toBeGreaterThan(0);
    expect(new Set(succeeded.map((e) => `${String(e.runId)}#${String(e.attempt)}`)).size).toBe(1);
    expect(new Set(succeeded.map((e) => e.cost?.runMs)).size).toBe(1);
    // One application, launched once; one result.
    const dirs = await dirsWithResult(stateDir, task);
    expect(dirs).toHaveLength(1);
    expect(await readdir(stateDir)).toHaveLength(1);
    expect(await launchesIn(dirs[0]!)).toHaveLength(1);
    expect((await result(dirs[0]!, task)).ok).toBe(true);
    const summary = JSON.parse(await readFile(join(dirs[0]!, 'results', 'batch.json'), 'utf8')) as {
      exitCode: number;
    };
    expect(summary.exitCode).toBe(0);
    expect(succeeded[0]!.after?.dataFiles).toBe(1);
  });
});

/** The stream's task timeout: room for a cold session start on a loaded machine, not for the stream. */
const STREAM_TIMEOUT_MS = 4 * 60_000;
/** The stream's task types: merges, then cleanups, both cheap once a table is merged. */
const STREAM_TYPES = ['merge', 'cleanup'] as const;
/**
 * The stream's bound (one task id per table, type and group): far beyond what fits in the
 * timeout, so that a session that never stops taking work meets the kill.
 */
const STREAM_MAX_TASKS = STREAM_TABLES * STREAM_TYPES.length * MAX_TASK_GROUPS;

describe('a resident session fed a stream of tasks up to its task timeout', () => {
  const sink = new RecordingSink();
  const tasks: Task[] = [];
  let stateDir: string;

  // Ended: its end reported, or its result written (a failed leader is reported at the exit).
  const ended = async (task: Task): Promise<boolean> =>
    sink.of(task.id).some((e) => e.status === 'succeeded' || e.status === 'failed') ||
    (await dirsWithResult(stateDir, task)).length > 0;

  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'icepack-resident-stream-'));
    cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
    const queue = queueOf(streamCatalog);
    // Round the tables, a new task id each round (group ids of merges, then of cleanups): a
    // merge of a table merged before has nothing to rewrite and succeeds all the same.
    const next = async (): Promise<void> => {
      const n = tasks.length;
      const truth = streamTables[n % STREAM_TABLES]!;
      const round = Math.floor(n / STREAM_TABLES);
      const type = STREAM_TYPES[Math.floor(round / MAX_TASK_GROUPS)]!;
      const planned = type === 'merge' ? mergeTask(truth, 2) : cleanupTask(truth, 1, new Date());
      const task = { ...planned, id: taskJobId(truth.id, type, (round % MAX_TASK_GROUPS) + 1) };
      tasks.push(task);
      await enqueue(queue, task);
    };
    await next();
    // It never idles out (its idle bound is longer than its timeout) nor fills (its task bound
    // is above the stream's): only its task timeout can end its intake.
    await residentWorker(
      streamCatalog,
      new LocalRunner({ stateDir, pollMs: 500 }),
      sink,
      { idleSeconds: 600, maxTasks: 100 },
      STREAM_TIMEOUT_MS,
    );
    // Two tasks in flight at all times, until one runs in a second application (the first
    // stopped taking them) or one ends otherwise than succeeded.
    await until(
      'a task in a second application, or a task not succeeded',
      async () => {
        if (sink.events.some((e) => e.status !== 'started' && e.status !== 'succeeded'))
          return true;
        if ((await readdir(stateDir)).length > 1) return true;
        if (tasks.length >= STREAM_MAX_TASKS) return true;
        const done = await Promise.all(tasks.map(ended));
        if (done.filter((d) => !d).length < 2) await next();
        return false;
      },
      SPARK_RUN_POLL,
    );
    await jobsDone(queue, tasks);
  }, 2_400_000);

  it('ends every task succeeded, run once: none timed out, none run twice', async () => {
    for (const task of tasks) {
      const mine = sink.of(task.id);
      assertEventLifecycle(mine);
      expect(mine.map((e) => e.status)).not.toContain('failed');
      expect(mine.map((e) => e.status)).not.toContain('retrying');
      const succeeded = mine.filter((e) => e.status === 'succeeded');
      expect(succeeded.length, task.id).toBeGreaterThan(0);
      expect(new Set(succeeded.map((e) => e.runId)).size, task.id).toBe(1);
      const dirs = await dirsWithResult(stateDir, task);
      expect(dirs, task.id).toHaveLength(1);
      expect((await result(dirs[0]!, task)).ok).toBe(true);
    }
  });

  it('has the first application close its inbox and exit on its own before its timeout', async () => {
    const [first] = await dirsWithResult(stateDir, tasks[0]!);
    const results = await readdir(join(first!, 'results'));
    // Two tasks at least (batch.json is the summary): the two launched with it, and whatever
    // was appended — how many fit depends on how long its first task took on this machine.
    expect(results.filter((f) => f !== 'batch.json').length).toBeGreaterThan(1);
    const summary = JSON.parse(await readFile(join(first!, 'results', 'batch.json'), 'utf8')) as {
      exitCode: number;
      error?: unknown;
    };
    // The runner's kill at the timeout would have written an error (`timeout`) here.
    expect(summary.error).toBeUndefined();
    expect(summary.exitCode).toBe(0);
    expect(await exists(join(first!, 'inbox.closed'))).toBe(true);
  });
});

describe('the tables', () => {
  it('hold the same rows after every run, in fewer files', async () => {
    const sets = await dispatchTableSets([KEY], sparkOptions, targets, { truthOnly: true });
    const before = [
      ...(Object.keys(cases) as Case[]).flatMap((c) => built[c]),
      ...(Object.keys(lones) as Lone[]).map((l) => lone[l]),
      ...streamTables,
    ];
    for (const [i, was] of before.entries()) {
      const now = truthOf(sets[i]);
      expect(now.contentChecksum, targets[i]!.prefix).toEqual(was.contentChecksum);
      expect(now.dataFiles.count, targets[i]!.prefix).toBeLessThan(was.dataFiles.count);
    }
  }, 900_000);
});
