import { spawn, type ChildProcess } from 'node:child_process';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { Annotations, SPARK_API } from '../spark-application.ts';

const repoRoot = resolve(import.meta.dirname, '..', '..', '..', '..', '..');
const cacheDir = process.env.ICEPACK_CACHE ?? join(homedir(), '.cache', 'icepack');
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export interface StandinOperatorOptions {
  readonly kubeConfig: KubeConfig;
  /** `spark.jars` for the local run. */
  readonly sparkJars: string;
  /** `local:///opt/icepack/…` in the image is this checkout. */
  readonly imageRoot?: string;
  readonly pollMs?: number;
  /** `local[n]` cap. Default 2. */
  readonly maxCores?: number;
}

interface Spec {
  mainApplicationFile: string;
  arguments?: string[];
  sparkConf?: Record<string, string>;
  driver?: { memory?: string; env?: { name: string; value: string }[] };
  executor?: { cores?: number; instances?: number };
}

interface App {
  metadata: {
    name: string;
    namespace: string;
    uid?: string;
    annotations?: Record<string, string>;
  };
  spec: Spec & { timeToLiveSeconds?: number };
  status?: { applicationState?: { state?: string }; terminationTime?: string };
}

const TERMINAL = new Set(['COMPLETED', 'FAILED', 'SUBMISSION_FAILED']);

/** Like the operator: `timeToLiveSeconds` after its termination an application is deleted. */
function expired(app: App, now: number): boolean {
  const ttl = app.spec.timeToLiveSeconds;
  const ended = Date.parse(app.status?.terminationTime ?? '');
  return (
    ttl !== undefined &&
    TERMINAL.has(app.status?.applicationState?.state ?? '') &&
    Number.isFinite(ended) &&
    now > ended + ttl * 1000
  );
}

/**
 * A stand-in for the Spark operator (no Kubernetes here): watches SparkApplications on the
 * API server, runs each with `spark-submit --master local[n]` and writes
 * `status.applicationState` like the operator: SUBMITTED → RUNNING → COMPLETED | FAILED.
 * Like the operator it reports a failed driver as
 * `driver container failed with ExitCode: N, Reason: Error` and nothing more: the job's own
 * error message does not reach the status (the dispatcher gets the exit code only).
 * Deleting an application kills its run; a finished one is deleted `timeToLiveSeconds` after
 * its `status.terminationTime`, as the operator garbage-collects it.
 */
export class StandinOperator {
  /** Launches per application name: the "exactly one Spark run" evidence. */
  readonly launches = new Map<string, number>();
  /** Every launch in order: application name and its task (annotation), kept after deletion. */
  readonly launchLog: { name: string; taskId: string | undefined }[] = [];
  readonly #api: CustomObjectsApi;
  readonly #o: Required<StandinOperatorOptions>;
  readonly #running = new Map<string, ChildProcess>();
  #timer: NodeJS.Timeout | undefined;
  #busy = false;

  constructor(options: StandinOperatorOptions) {
    this.#api = options.kubeConfig.makeApiClient(CustomObjectsApi);
    this.#o = { imageRoot: repoRoot, pollMs: 300, maxCores: 2, ...options };
  }

  /** Launches of a task's applications, whatever their names and even if since deleted. */
  launchesOf(taskId: string): number {
    return this.launchLog.filter((launch) => launch.taskId === taskId).length;
  }

  start(): void {
    this.#timer = setInterval(() => void this.#tick(), this.#o.pollMs);
  }

  stop(): void {
    clearInterval(this.#timer);
    for (const child of this.#running.values()) child.kill('SIGKILL');
  }

  async #status(
    app: App,
    applicationState: Record<string, string>,
    extra: Record<string, string> = {},
  ): Promise<void> {
    await this.#api.patchNamespacedCustomObjectStatus(
      {
        ...SPARK_API,
        namespace: app.metadata.namespace,
        name: app.metadata.name,
        body: { status: { applicationState, ...extra } },
      },
      merge,
    );
  }

  async #tick(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      const list = (await this.#api.listClusterCustomObject({ ...SPARK_API })) as { items: App[] };
      const present = new Set<string>();
      for (const app of list.items) {
        const key = `${app.metadata.namespace}/${app.metadata.name}`;
        present.add(key);
        if ((app.status?.applicationState?.state ?? '') === '' && !this.#running.has(key))
          await this.#launch(key, app);
        else if (expired(app, Date.now()))
          await this.#api.deleteNamespacedCustomObject({
            ...SPARK_API,
            namespace: app.metadata.namespace,
            name: app.metadata.name,
          });
      }
      for (const [key, child] of this.#running) {
        if (!present.has(key)) {
          child.kill('SIGKILL');
          this.#running.delete(key);
        }
      }
    } catch {
      // The API server restarts in some tests: try again next tick.
    } finally {
      this.#busy = false;
    }
  }

  async #launch(key: string, app: App): Promise<void> {
    const { spec } = app;
    await this.#status(app, { state: 'SUBMITTED' });
    const cores = Math.max(
      1,
      Math.min(this.#o.maxCores, (spec.executor?.cores ?? 1) * (spec.executor?.instances ?? 1)),
    );
    const conf: Record<string, string> = {
      'spark.ui.enabled': 'false',
      'spark.jars': this.#o.sparkJars,
      ...spec.sparkConf,
    };
    const args = [
      '--master',
      `local[${String(cores)}]`,
      '--driver-memory',
      spec.driver?.memory ?? '1g',
    ];
    for (const [k, v] of Object.entries(conf)) args.push('--conf', `${k}=${v}`);
    args.push(
      spec.mainApplicationFile.replace(/^local:\/\/\/opt\/icepack\//, `${this.#o.imageRoot}/`),
      ...(spec.arguments ?? []),
    );
    const python = join(cacheDir, 'venv', 'bin', 'python');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PYSPARK_PYTHON: python,
      PYSPARK_DRIVER_PYTHON: python,
      SPARK_LOCAL_IP: '127.0.0.1',
    };
    for (const e of spec.driver?.env ?? []) env[e.name] = e.value;
    const child = spawn(join(cacheDir, 'venv', 'bin', 'spark-submit'), args, {
      env,
      stdio: 'ignore',
    });
    this.#running.set(key, child);
    this.launches.set(app.metadata.name, (this.launches.get(app.metadata.name) ?? 0) + 1);
    this.launchLog.push({
      name: app.metadata.name,
      taskId: app.metadata.annotations?.[Annotations.taskId],
    });
    child.on('close', (code) => {
      if (this.#running.get(key) !== child) return; // deleted (cancelled)
      this.#running.delete(key);
      const state: Record<string, string> =
        code === 0
          ? { state: 'COMPLETED' }
          : {
              state: 'FAILED',
              errorMessage: `driver container failed with ExitCode: ${String(code)}, Reason: Error`,
            };
      void this.#status(app, state, { terminationTime: new Date().toISOString() }).catch(
        () => undefined,
      );
    });
    await this.#status(app, { state: 'RUNNING' });
  }
}
