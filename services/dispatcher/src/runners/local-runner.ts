import { spawn } from 'node:child_process';
import {
  access,
  appendFile,
  mkdir,
  open,
  readFile,
  rename,
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
import { errorWithoutResult, jobResultSchema } from './job-result.ts';
import {
  processAlive,
  processStartTicks,
  signalGroup,
  type ProcessIdentity,
} from './local-process.ts';
import { runKey } from './run-key.ts';
import type { RunEnd, RunKey, RunOutcome, RunRequest, SparkRunner } from './spark-runner.ts';

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
    const done = await this.readResult(dir);
    if (done !== undefined) return { ...done, reattached: true };

    // Resolved before anything is marked: a credential that cannot be resolved launches
    // nothing (a run launched before is still followed).
    const credentials = localJobCredentials(
      request.catalog.auth ?? { type: 'none' },
      this.opts.resolveSecret,
    );
    if (!credentials.ok && !(await this.isLaunched(request))) {
      return {
        ok: false,
        error: errorWithoutResult('bad-input', credentials.problem, false),
        reattached: false,
      };
    }
    let launch: LaunchRecord | undefined;
    let reattached = false;
    try {
      const marker = await open(join(dir, 'launched'), 'wx');
      await marker.writeFile(new Date().toISOString());
      await marker.close();
      launch = await this.launch(dir, request, credentials.ok ? credentials.env : {});
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      reattached = true;
      launch = await this.readLaunch(dir, request);
    }
    request.onSubmitted?.();
    const outcome = await this.follow(dir, request, launch);
    return { ...outcome, reattached };
  }

  private args(dir: string, request: RunRequest): string[] {
    const { size, catalog } = request;
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
      ...jobSparkConf(catalog, { ...request.binding.spark.sparkConf, ...this.opts.sparkConf }),
    };
    const args = [
      '--master',
      `local[${String(cores)}]`,
      '--name',
      `icepack-${request.task.type}-${this.runName(request)}`,
      '--driver-memory',
      `${String(memoryMiB)}m`,
    ];
    for (const [key, value] of Object.entries(conf)) args.push('--conf', `${key}=${value}`);
    args.push(
      this.opts.jobFile,
      '--task',
      join(dir, 'task.json'),
      '--result-file',
      join(dir, 'result.json'),
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
    request: RunRequest,
    credentials: Readonly<Record<string, string>>,
  ): Promise<LaunchRecord> {
    await writeFile(join(dir, 'task.json'), JSON.stringify(request.task));
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
      ...(request.traceparent === undefined ? {} : { TRACEPARENT: request.traceparent }),
    };
    // Detached (own session): the job survives a dispatcher crash, and a restarted
    // dispatcher re-attaches to it instead of launching it again.
    const child = spawn(
      '/bin/sh',
      ['-c', LAUNCH_SCRIPT, 'icepack-launch', this.opts.sparkSubmit, ...this.args(dir, request)],
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
    await this.recordLaunch(dir, request, record);
    return record;
  }

  /** Writes `pid` (atomically) and the launch's line in `runs.log`. */
  private async recordLaunch(
    dir: string,
    request: RunRequest,
    record: LaunchRecord & { recovered?: true },
  ): Promise<void> {
    await writeFile(join(dir, 'pid.tmp'), JSON.stringify(record));
    await rename(join(dir, 'pid.tmp'), join(dir, 'pid'));
    await appendFile(
      join(dir, 'runs.log'),
      `${JSON.stringify({ ...record, taskId: request.task.id, runId: this.runName(request), taskRun: request.taskRun, attempt: request.attempt })}\n`,
    );
  }

  /**
   * The launch record; if the launching dispatcher died before writing it, the one the
   * process left (`child.pid`, its first act), which is then recorded as `pid`.
   */
  private async readLaunch(dir: string, request: RunRequest): Promise<LaunchRecord | undefined> {
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
    await this.recordLaunch(dir, request, { ...record, recovered: true });
    return record;
  }

  private async readResult(dir: string): Promise<RunEnd | undefined> {
    let text: string;
    try {
      text = await readFile(join(dir, 'result.json'), 'utf8');
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

  private async follow(
    dir: string,
    request: RunRequest,
    launch: LaunchRecord | undefined,
  ): Promise<RunEnd> {
    const { timeoutMs } = request;
    if (launch === undefined) {
      // Marked launched but no pid, not even the process's own: the launcher died before the
      // spawn, or a racing launcher is spawning right now. Give the latter a moment.
      await this.opts.pause(this.opts.pollMs * 2);
      launch = await this.readLaunch(dir, request);
    }
    if (launch !== undefined) {
      const deadline = launch.startedAt + timeoutMs;
      while (await processAlive(launch, dir)) {
        if (Date.now() > deadline) {
          signalGroup(launch.pid, 'SIGTERM');
          await this.opts.pause(this.opts.killGraceMs);
          signalGroup(launch.pid, 'SIGKILL');
          const error: TaskError = errorWithoutResult(
            'timeout',
            `cancelled after ${String(Math.round(timeoutMs / 1000))}s`,
            false,
          );
          await writeFile(
            join(dir, 'result.json'),
            JSON.stringify({ ok: false, taskId: null, exitCode: 1, error }),
          );
          return { ok: false, error };
        }
        await this.opts.pause(this.opts.pollMs);
      }
    }
    const result = await this.readResult(dir);
    if (result !== undefined) return result;
    const tail = await this.stderrTail(dir);
    // Killed or crashed without a result line (OOM kill, machine restart): retryable, as a
    // new attempt (a new run directory).
    return {
      ok: false,
      error: errorWithoutResult(
        'lost',
        `the Spark job ended without a result${tail === '' ? '' : `: …${tail.slice(-800)}`}`,
        true,
      ),
    };
  }
}
