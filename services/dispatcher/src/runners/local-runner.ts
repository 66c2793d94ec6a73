import { spawn } from 'node:child_process';
import {
  access,
  appendFile,
  mkdir,
  open,
  readFile,
  rename,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { availableParallelism, homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { defaultCatalogAccessPolicy, secretResolver } from '@icepack/runtime';
import type { RunLocation, TaskError } from '@icepack/types';
import { jobSparkConf } from '../domain/job-catalog.ts';
import { localJobCredentials, type ResolveJobSecret } from '../domain/job-credentials.ts';
import { localJobEnvironment } from '../domain/job-environment.ts';
import { errorWithoutResult, JobExitCode, jobResultSchema } from './job-result.ts';
import {
  processAlive,
  processStartTicks,
  signalGroup,
  type ProcessIdentity,
} from './local-process.ts';
import { runKey, taskHash } from './run-key.ts';
import type {
  BatchOutcome,
  BatchRunKey,
  BatchRunRequest,
  BatchTask,
  RunEnd,
  RunKey,
  RunOutcome,
  RunRequest,
  SparkRunner,
} from './spark-runner.ts';

const cacheDir = process.env.ICEPACK_CACHE ?? join(homedir(), '.cache', 'icepack');

/** The job file in this repository. */
export const DEFAULT_JOB_FILE = resolve(
  import.meta.dirname,
  '..',
  '..',
  '..',
  '..',
  'jobs',
  'spark',
  'icepack_job.py',
);

export interface LocalRunnerOptions {
  /** Where run directories (markers, pid, result, logs) live. Must survive restarts. */
  readonly stateDir: string;
  /** Default: the cached venv's `spark-submit`. */
  readonly sparkSubmit?: string;
  /** Python for the job; default: the cached venv's. */
  readonly python?: string;
  /** Default: `jobs/spark/icepack_job.py` of this checkout. */
  readonly jobFile?: string;
  /** `spark.jars` (the Iceberg Spark runtime). Default: `ICEPACK_SPARK_JARS`. */
  readonly sparkJars?: string;
  /**
   * Variables of the dispatcher's environment the job inherits beyond the allow-list
   * (domain/job-environment.ts). Default none.
   */
  readonly jobEnv?: readonly string[];
  /** Upper bound of `local[n]`. Default: the machine's cores. */
  readonly maxCores?: number;
  /** Status poll interval. Default 1000 ms. */
  readonly pollMs?: number;
  /** Grace between SIGTERM and SIGKILL on timeout. Default 10 s. */
  readonly killGraceMs?: number;
  /** Extra `--conf` pairs. Default none. */
  readonly sparkConf?: Readonly<Record<string, string>>;
  /**
   * Resolves the catalog's credential reference (`catalog.auth`) for the job's environment.
   * Default: the dispatcher's environment and secret files under the default policy
   * (`ICEPACK_SECRET_*`, `/var/run/secrets/icepack`); the dispatcher passes its configured one.
   */
  readonly resolveSecret?: ResolveJobSecret;
  /** How the runner waits between two looks at a run. Default a timer; tests pace runs here. */
  readonly pause?: (ms: number) => Promise<void>;
}

/** The `pid` file: the launched process (pid and start time) and when it was launched. */
interface LaunchRecord extends ProcessIdentity {
  readonly startedAt: number;
}

/** What one launch runs: a single task or a batch; the rest of the run directory is shared. */
interface LaunchSpec extends Pick<
  RunRequest,
  'binding' | 'size' | 'catalog' | 'traceparent' | 'timeoutMs'
> {
  /** `--name` of the Spark application. */
  readonly appName: string;
  /** The job's input file in the run directory and its content. */
  readonly input: { readonly file: string; readonly json: string };
  /** The job's arguments that name its input and results. */
  readonly jobArgs: readonly string[];
  /** What `runs.log` records of the launch besides the process. */
  readonly logFields: Readonly<Record<string, unknown>>;
  /** A resident session's inbox (ADR 0045): made before the launch, so appends find it. */
  readonly inbox?: string;
}

/** The directory of a batch's per-task results and, in it, the job's summary (jobs/spark). */
const BATCH_RESULTS = 'results';
const BATCH_FILE = join(BATCH_RESULTS, 'batch.json');
/**
 * A resident session's inbox in the batch's run directory (ADR 0045, jobs/spark `--inbox`):
 * the dispatcher renames task lists in; the job closes it by renaming it to `inbox.closed`.
 */
const INBOX = 'inbox';
const CLOSED_INBOX = 'inbox.closed';

const TAIL = 3_000;

/**
 * The launched process writes its own pid before it becomes spark-submit (same process), so a
 * dispatcher that dies between the spawn and writing `pid` leaves the run findable.
 */
const LAUNCH_SCRIPT = 'echo $$ > child.pid && exec "$@"';

/**
 * `spark-submit --master local[n]` in its own session, tracked by files in a run directory
 * keyed by (task id, attempt): `launched` (created exclusively before the launch: at most one
 * launch per attempt, ever), `child.pid` (the process's own, written before it execs
 * spark-submit), `pid` (pid and start time), `result.json` (the job's result line),
 * `runs.log` (one line per launch). A restarted dispatcher finds the run there and follows
 * it; the process is known by pid and start time, never by its command line.
 */
export class LocalRunner implements SparkRunner {
  readonly kind = 'local';
  private readonly opts: Required<Omit<LocalRunnerOptions, 'sparkJars'>> & { sparkJars?: string };

  constructor(options: LocalRunnerOptions) {
    this.opts = {
      sparkSubmit: join(cacheDir, 'venv', 'bin', 'spark-submit'),
      python: join(cacheDir, 'venv', 'bin', 'python'),
      jobFile: DEFAULT_JOB_FILE,
      sparkJars: options.sparkJars ?? process.env.ICEPACK_SPARK_JARS,
      maxCores: availableParallelism(),
      pollMs: 1_000,
      killGraceMs: 10_000,
      sparkConf: {},
      jobEnv: [],
      resolveSecret: secretResolver(process.env, defaultCatalogAccessPolicy),
      pause: (ms) => sleep(ms),
      ...options,
    };
  }

  /** The run directory's name: the run id. */
  runName(key: RunKey): string {
    return runKey(key.taskRun, key.attempt);
  }

  location(key: RunKey): RunLocation {
    const dir = this.runDir(key);
    return {
      runner: this.kind,
      runId: this.runName(key),
      logs: [join(dir, 'stderr.log'), join(dir, 'stdout.log')],
    };
  }

  /** The run directory of an attempt (tests read `runs.log` there). */
  runDir(key: RunKey): string {
    return join(this.opts.stateDir, this.runName(key));
  }

  async isLaunched(request: RunKey): Promise<boolean> {
    try {
      await access(join(this.runDir(request), 'launched'));
      return true;
    } catch {
      return false;
    }
  }

  async run(request: RunRequest): Promise<RunOutcome> {
    const dir = this.runDir(request);
    await mkdir(dir, { recursive: true });
    const done = await this.readResult(join(dir, 'result.json'));
    if (done !== undefined) return { ...done, reattached: true };

    const spec = this.singleSpec(dir, request);
    const started = await this.start(dir, spec);
    if ('problem' in started) {
      return {
        ok: false,
        error: errorWithoutResult('bad-input', started.problem, false),
        reattached: false,
      };
    }
    const { launch, reattached } = started;
    request.onSubmitted?.();
    const outcome = await this.follow(dir, spec, launch);
    return { ...outcome, reattached };
  }

  /** The batch's run directory: keyed like a run's, by (batch run, attempt). */
  batchDir(key: BatchRunKey): string {
    return join(this.opts.stateDir, this.batchName(key));
  }

  /** The batch's run directory and its logs, as a run's `location`. */
  batchLocation(key: BatchRunKey): RunLocation {
    const dir = this.batchDir(key);
    return {
      runner: this.kind,
      runId: this.batchName(key),
      logs: [join(dir, 'stderr.log'), join(dir, 'stdout.log')],
    };
  }

  /** The batch's run directory name: its tasks' run id. */
  batchName(key: BatchRunKey): string {
    return `batch-${runKey(key.batchRun, key.attempt)}`;
  }

  /**
   * One spark-submit for the batch (`--tasks`), tracked in its run directory as a single run
   * is; each task's end from its own result file (`results/<task hash>.json`), which the job
   * writes as the task ends, so a restarted dispatcher reads the tasks that ended before the
   * crash and follows the rest. Never launched twice per (batch run, attempt).
   */
  async runBatch(request: BatchRunRequest): Promise<BatchOutcome> {
    const dir = this.batchDir(request);
    await mkdir(dir, { recursive: true });
    try {
      await access(join(dir, BATCH_FILE));
      const idleMs = await this.batchIdleMs(dir);
      return {
        ends: await this.batchEnds(dir, request.tasks),
        reattached: true,
        ...(idleMs === undefined ? {} : { idleMs }),
      };
    } catch {
      // Not ended yet (or never launched).
    }
    const { resident } = request;
    const inbox = join(dir, INBOX);
    const spec: LaunchSpec = {
      ...request,
      appName: `icepack-batch-${runKey(request.batchRun, request.attempt)}`,
      input: {
        file: 'tasks.json',
        json: JSON.stringify(request.tasks.map((t) => t.task)),
      },
      jobArgs: [
        '--tasks',
        join(dir, 'tasks.json'),
        '--result-dir',
        join(dir, BATCH_RESULTS),
        ...(resident === undefined
          ? []
          : [
              '--inbox',
              inbox,
              '--idle-seconds',
              String(resident.idleSeconds),
              '--max-tasks',
              String(resident.maxTasks),
              '--close-by',
              (resident.closeBy / 1000).toFixed(3),
            ]),
      ],
      logFields: {
        // The run id its tasks' events carry, as a single run's line has it.
        runId: this.batchName(request),
        batchRun: request.batchRun,
        attempt: request.attempt,
        taskRuns: request.tasks.map((t) => t.taskRun),
        ...(resident === undefined ? {} : { resident: true }),
      },
      ...(resident === undefined ? {} : { inbox }),
    };
    const started = await this.start(dir, spec);
    if ('problem' in started) {
      const error = errorWithoutResult('bad-input', started.problem, false);
      const ends = new Map<string, RunEnd>(
        request.tasks.map((t) => [t.taskRun, { ok: false, error }]),
      );
      return { ends, reattached: false };
    }
    const { launch, reattached } = started;
    request.onSubmitted?.();
    const tracked = [...request.tasks];
    const tick = (await this.isResident(dir))
      ? this.residentTick(dir, tracked, resident)
      : undefined;
    const ended = await this.waitForExit(dir, spec, launch, tick);
    if (ended === 'timeout') {
      const error = this.timeoutError(request.timeoutMs);
      await mkdir(join(dir, BATCH_RESULTS), { recursive: true });
      await writeFile(join(dir, BATCH_FILE), JSON.stringify({ exitCode: 1, error }));
    }
    const ends = await this.batchEnds(dir, tracked);
    const idleMs = await this.batchIdleMs(dir);
    return { ends, reattached, ...(idleMs === undefined ? {} : { idleMs }) };
  }

  /**
   * Appends tasks to the batch's inbox (ADR 0045): written beside it, renamed in — atomic, and
   * refused (`ENOENT`, false) once the job renamed the inbox to close it, or when the batch has
   * none. Names sort in the order of the appends (the job runs them in name order).
   */
  async appendToBatch(key: BatchRunKey, tasks: readonly BatchTask[]): Promise<boolean> {
    const first = tasks[0];
    if (first === undefined) return true;
    const dir = this.batchDir(key);
    const name = `${String(Date.now()).padStart(15, '0')}-${taskHash(first.taskRun)}.json`;
    const tmp = join(dir, `append-${name}.tmp`);
    try {
      await writeFile(tmp, JSON.stringify(tasks.map((t) => t.task)));
      await rename(tmp, join(dir, INBOX, name));
      return true;
    } catch (error) {
      await rm(tmp, { force: true });
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
  }

  /** Was the batch launched as a resident session (its inbox open or closed)? */
  private async isResident(dir: string): Promise<boolean> {
    for (const name of [INBOX, CLOSED_INBOX]) {
      try {
        await access(join(dir, name));
        return true;
      } catch {
        // Not this one.
      }
    }
    return false;
  }

  /**
   * A resident session's look at each poll: its launcher appends (`onPoll`, only while the
   * inbox is open) and hears each task's end as its result appears (`onEnd`); a follower (no
   * `resident`: a dispatcher following the batch for its own tasks after a restart) is done
   * once each of its tasks has a result — the application may idle on for others.
   */
  private residentTick(
    dir: string,
    tracked: BatchTask[],
    resident: BatchRunRequest['resident'],
  ): () => Promise<boolean> {
    const reported = new Set<string>();
    return async () => {
      if (resident !== undefined && (await this.isOpen(join(dir, INBOX))))
        tracked.push(...(await resident.onPoll()));
      for (const { taskRun, task } of tracked) {
        if (reported.has(taskRun)) continue;
        const end = await this.readResult(join(dir, BATCH_RESULTS, `${taskHash(task.id)}.json`));
        if (end === undefined) continue;
        reported.add(taskRun);
        await resident?.onEnd(taskRun, end);
      }
      return resident === undefined && tracked.every((t) => reported.has(t.taskRun));
    };
  }

  private async isOpen(inbox: string): Promise<boolean> {
    return access(inbox).then(
      () => true,
      () => false,
    );
  }

  /** A resident session's idle time after its last task (the job's summary `idleMs`). */
  private async batchIdleMs(dir: string): Promise<number | undefined> {
    try {
      const summary = JSON.parse(await readFile(join(dir, BATCH_FILE), 'utf8')) as {
        idleMs?: unknown;
      };
      return typeof summary.idleMs === 'number' && summary.idleMs >= 0
        ? Math.round(summary.idleMs)
        : undefined;
    } catch {
      return undefined;
    }
  }

  /** Each task's end: its result file, else what the batch says, else lost (retryable). */
  private async batchEnds(dir: string, tasks: readonly BatchTask[]): Promise<Map<string, RunEnd>> {
    let batch: { exitCode?: number; error?: TaskError } = {};
    try {
      batch = JSON.parse(await readFile(join(dir, BATCH_FILE), 'utf8')) as typeof batch;
    } catch {
      // Killed before its summary: the tasks without a result are lost.
    }
    const tail = await this.stderrTail(dir);
    const ends = new Map<string, RunEnd>();
    for (const { taskRun, task } of tasks) {
      const file = join(dir, BATCH_RESULTS, `${taskHash(task.id)}.json`);
      const end = await this.readResult(file);
      // Bad input of the batch as a whole (exit 2) and a timeout are not retried; a batch
      // whose session died under the tasks leaves them to a retry, as a single run killed would.
      const error =
        batch.error !== undefined &&
        (batch.exitCode === JobExitCode.badInput || batch.error.kind === 'timeout')
          ? batch.error
          : this.lostError(tail);
      ends.set(taskRun, end ?? { ok: false, error });
    }
    return ends;
  }

  private singleSpec(dir: string, request: RunRequest): LaunchSpec {
    return {
      ...request,
      appName: `icepack-${request.task.type}-${this.runName(request)}`,
      input: { file: 'task.json', json: JSON.stringify(request.task) },
      jobArgs: ['--task', join(dir, 'task.json'), '--result-file', join(dir, 'result.json')],
      logFields: {
        taskId: request.task.id,
        runId: this.runName(request),
        taskRun: request.taskRun,
        attempt: request.attempt,
      },
    };
  }

  /**
   * Resolves the catalog's credential, then claims the launch. Resolved before anything is
   * marked: a credential that cannot be resolved launches nothing (`problem`); a run
   * launched before is still followed.
   */
  private async start(
    dir: string,
    spec: LaunchSpec,
  ): Promise<{ problem: string } | { launch: LaunchRecord | undefined; reattached: boolean }> {
    const credentials = localJobCredentials(
      spec.catalog.auth ?? { type: 'none' },
      this.opts.resolveSecret,
    );
    const marked = await access(join(dir, 'launched')).then(
      () => true,
      () => false,
    );
    if (!credentials.ok && !marked) return { problem: credentials.problem };
    return this.claim(dir, spec, credentials.ok ? credentials.env : {});
  }

  /**
   * Marks the run directory launched (exclusively: at most one launch, ever) and launches;
   * when it was marked before, follows that launch instead.
   */
  private async claim(
    dir: string,
    spec: LaunchSpec,
    credentials: Readonly<Record<string, string>>,
  ): Promise<{ launch: LaunchRecord | undefined; reattached: boolean }> {
    try {
      const marker = await open(join(dir, 'launched'), 'wx');
      await marker.writeFile(new Date().toISOString());
      await marker.close();
      return { launch: await this.launch(dir, spec, credentials), reattached: false };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      return { launch: await this.readLaunch(dir, spec), reattached: true };
    }
  }

  private args(spec: LaunchSpec): string[] {
    const { size, catalog } = spec;
    const cores = Math.max(
      1,
      Math.min(this.opts.maxCores, size.executor.cores * size.executor.instances),
    );
    // Local mode runs the executors inside the driver JVM: it gets both heaps.
    const memoryMiB = Math.ceil(
      (size.driver.memoryBytes + size.executor.memoryBytes * size.executor.instances) / 2 ** 20,
    );
    const conf: Record<string, string> = {
      'spark.ui.enabled': 'false',
      'spark.ui.showConsoleProgress': 'false',
      'spark.sql.shuffle.partitions': String(cores),
      'spark.default.parallelism': String(cores),
      'spark.sql.session.timeZone': 'UTC',
      ...(this.opts.sparkJars === undefined ? {} : { 'spark.jars': this.opts.sparkJars }),
      // The catalog's non-secret configuration (its properties: S3 endpoint, region, …) as
      // the SparkApplication has it, the group's conf, the redaction regex last. No secret.
      ...jobSparkConf(catalog, { ...spec.binding.spark.sparkConf, ...this.opts.sparkConf }),
    };
    const args = [
      '--master',
      `local[${String(cores)}]`,
      '--name',
      spec.appName,
      '--driver-memory',
      `${String(memoryMiB)}m`,
    ];
    for (const [key, value] of Object.entries(conf)) args.push('--conf', `${key}=${value}`);
    args.push(
      this.opts.jobFile,
      ...spec.jobArgs,
      '--catalog-name',
      catalog.name,
      '--catalog-uri',
      catalog.uri,
      '--max-concurrent-file-group-rewrites',
      String(size.maxConcurrentFileGroupRewrites),
    );
    if (catalog.warehouse !== undefined) args.push('--warehouse', catalog.warehouse);
    return args;
  }

  private async launch(
    dir: string,
    spec: LaunchSpec,
    credentials: Readonly<Record<string, string>>,
  ): Promise<LaunchRecord> {
    await writeFile(join(dir, spec.input.file), spec.input.json);
    if (spec.inbox !== undefined) await mkdir(spec.inbox, { recursive: true });
    const stdout = await open(join(dir, 'stdout.log'), 'a');
    const stderr = await open(join(dir, 'stderr.log'), 'a');
    // The job inherits an allow-list of the dispatcher's environment (not its Redis, Kafka or
    // API secrets, nor another catalog's): what runs Spark and reaches storage, such as the
    // S3 keys of the AWS SDK's default chain. Its catalog credential only here, in the process
    // environment (not argv, which `ps` shows, nor any file of the run).
    const env: NodeJS.ProcessEnv = {
      ...localJobEnvironment(process.env, this.opts.jobEnv),
      ...credentials,
      PYSPARK_PYTHON: this.opts.python,
      PYSPARK_DRIVER_PYTHON: this.opts.python,
      SPARK_LOCAL_IP: process.env.SPARK_LOCAL_IP ?? '127.0.0.1',
      ...(spec.traceparent === undefined ? {} : { TRACEPARENT: spec.traceparent }),
    };
    // Detached (own session): the job survives a dispatcher crash, and a restarted
    // dispatcher re-attaches to it instead of launching it again.
    const child = spawn(
      '/bin/sh',
      ['-c', LAUNCH_SCRIPT, 'icepack-launch', this.opts.sparkSubmit, ...this.args(spec)],
      {
        cwd: dir,
        env,
        detached: true,
        stdio: ['ignore', stdout.fd, stderr.fd],
      },
    );
    const pid = await new Promise<number>((ok, fail) => {
      child.once('spawn', () => ok(child.pid ?? -1));
      child.once('error', fail);
    });
    // Read while it cannot have been reaped yet (that happens on a later turn of the loop).
    const startTicks = await processStartTicks(pid);
    // Reap it when it exits while we live; `follow` watches /proc either way.
    child.unref();
    await stdout.close();
    await stderr.close();
    const record: LaunchRecord = {
      pid,
      ...(startTicks === undefined ? {} : { startTicks }),
      startedAt: Date.now(),
    };
    await this.recordLaunch(dir, spec, record);
    return record;
  }

  /** Writes `pid` (atomically) and the launch's line in `runs.log`. */
  private async recordLaunch(
    dir: string,
    spec: LaunchSpec,
    record: LaunchRecord & { recovered?: true },
  ): Promise<void> {
    await writeFile(join(dir, 'pid.tmp'), JSON.stringify(record));
    await rename(join(dir, 'pid.tmp'), join(dir, 'pid'));
    await appendFile(
      join(dir, 'runs.log'),
      `${JSON.stringify({ ...record, ...spec.logFields })}\n`,
    );
  }

  /**
   * The launch record; if the launching dispatcher died before writing it, the one the
   * process left (`child.pid`, its first act), which is then recorded as `pid`.
   */
  private async readLaunch(dir: string, spec: LaunchSpec): Promise<LaunchRecord | undefined> {
    try {
      return JSON.parse(await readFile(join(dir, 'pid'), 'utf8')) as LaunchRecord;
    } catch {
      // No record: look for the process's own.
    }
    let pid: number;
    let startedAt: number;
    try {
      pid = Number((await readFile(join(dir, 'child.pid'), 'utf8')).trim());
      startedAt = (await stat(join(dir, 'child.pid'))).mtimeMs;
    } catch {
      return undefined;
    }
    if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
    const startTicks = await processStartTicks(pid);
    const record: LaunchRecord = {
      pid,
      ...(startTicks === undefined ? {} : { startTicks }),
      startedAt: Math.round(startedAt),
    };
    await this.recordLaunch(dir, spec, { ...record, recovered: true });
    return record;
  }

  /** The job's result in `file` (a single run's `result.json`, a batch task's own file). */
  private async readResult(file: string): Promise<RunEnd | undefined> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      return undefined;
    }
    const parsed = jobResultSchema.safeParse(JSON.parse(text));
    if (!parsed.success) {
      return {
        ok: false,
        error: errorWithoutResult('failed', `unreadable job result: ${text.slice(0, 500)}`, false),
      };
    }
    const result = parsed.data;
    return result.ok ? { ok: true, result } : { ok: false, error: result.error };
  }

  private async stderrTail(dir: string): Promise<string> {
    try {
      return (await readFile(join(dir, 'stderr.log'), 'utf8')).slice(-TAIL).trim();
    } catch {
      return '';
    }
  }

  /**
   * Waits until the launched process ends; past the timeout (from the launch) it is killed
   * (SIGTERM, then SIGKILL after the grace) and `timeout` returned. `tick`, at each look at the
   * live process, may end the wait (`done`: what the caller follows has ended).
   */
  private async waitForExit(
    dir: string,
    spec: LaunchSpec,
    launch: LaunchRecord | undefined,
    tick?: () => Promise<boolean>,
  ): Promise<'exited' | 'timeout' | 'done'> {
    if (launch === undefined) {
      // Marked launched but no pid, not even the process's own: the launcher died before the
      // spawn, or a racing launcher is spawning right now. Give the latter a moment.
      await this.opts.pause(this.opts.pollMs * 2);
      launch = await this.readLaunch(dir, spec);
    }
    if (launch === undefined) return 'exited';
    const deadline = launch.startedAt + spec.timeoutMs;
    while (await processAlive(launch, dir)) {
      if (tick !== undefined && (await tick())) return 'done';
      if (Date.now() > deadline) {
        signalGroup(launch.pid, 'SIGTERM');
        await this.opts.pause(this.opts.killGraceMs);
        signalGroup(launch.pid, 'SIGKILL');
        return 'timeout';
      }
      await this.opts.pause(this.opts.pollMs);
    }
    return 'exited';
  }

  private timeoutError(timeoutMs: number): TaskError {
    return errorWithoutResult(
      'timeout',
      `cancelled after ${String(Math.round(timeoutMs / 1000))}s`,
      false,
    );
  }

  /**
   * Killed or crashed without a result line (OOM kill, machine restart): retryable, as a new
   * attempt (a new run directory).
   */
  private lostError(tail: string): TaskError {
    return errorWithoutResult(
      'lost',
      `the Spark job ended without a result${tail === '' ? '' : `: …${tail.slice(-800)}`}`,
      true,
    );
  }

  private async follow(
    dir: string,
    spec: LaunchSpec,
    launch: LaunchRecord | undefined,
  ): Promise<RunEnd> {
    if ((await this.waitForExit(dir, spec, launch)) === 'timeout') {
      const error = this.timeoutError(spec.timeoutMs);
      await writeFile(
        join(dir, 'result.json'),
        JSON.stringify({ ok: false, taskId: null, exitCode: 1, error }),
      );
      return { ok: false, error };
    }
    const result = await this.readResult(join(dir, 'result.json'));
    if (result !== undefined) return result;
    return { ok: false, error: this.lostError(await this.stderrTail(dir)) };
  }
}
