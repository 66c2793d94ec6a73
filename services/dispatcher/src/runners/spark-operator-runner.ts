import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type V1Pod,
} from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunLocation, TaskError } from '@icepack/types';
import { kubeClients } from '../adapters/kube-client.ts';
import { OUT_OF_MEMORY_KIND } from '../domain/resource-failure.ts';
import {
  errorFromExitCode,
  errorWithoutResult,
  JobExitCode,
  outcomeFigures,
  parseBatchSummary,
  parseJobOutput,
  type BatchSummary,
  type JobOutput,
} from './job-result.ts';
import { taskHash } from './run-key.ts';
import {
  applicationName,
  batchApplicationName,
  sparkBatchApplication,
  operatorRunLocation,
  jobCredentials,
  sparkApplication,
  SPARK_API,
  type ApplicationOptions,
} from './spark-application.ts';
import type {
  BatchOutcome,
  BatchRunKey,
  BatchRunRequest,
  RunEnd,
  RunKey,
  RunOutcome,
  RunRequest,
  SparkRunner,
} from './spark-runner.ts';

export interface SparkOperatorRunnerOptions extends Partial<ApplicationOptions> {
  readonly kubeConfig: KubeConfig;
  /** Status poll interval. Default 2 s. */
  readonly pollMs?: number;
}

/** Terminal states of `status.applicationState.state`. */
export const SparkAppState = {
  completed: 'COMPLETED',
  failed: 'FAILED',
  submissionFailed: 'SUBMISSION_FAILED',
} as const;

interface AppStatus {
  readonly state: string;
  readonly errorMessage?: string;
}

function statusOf(app: Record<string, unknown>): AppStatus {
  const status = (app.status ?? {}) as {
    applicationState?: { state?: string; errorMessage?: string };
  };
  return {
    state: status.applicationState?.state ?? '',
    ...(status.applicationState?.errorMessage === undefined
      ? {}
      : { errorMessage: status.applicationState.errorMessage }),
  };
}

/** The first of the pod's termination messages `parse` understands. */
function fromTerminationMessage<T>(
  pod: V1Pod,
  parse: (text: string) => T | undefined,
): T | undefined {
  for (const container of pod.status?.containerStatuses ?? []) {
    const message = container.state?.terminated?.message;
    if (message === undefined) continue;
    const parsed = parse(message);
    if (parsed !== undefined) return parsed;
  }
  return undefined;
}

/**
 * The job's result line from its driver pod — its figures on success, its own error on
 * failure: the job writes the line as the driver container's termination message
 * (`--termination-log`), which the pod status carries.
 */
export function jobOutputOfDriverPod(pod: V1Pod): JobOutput | undefined {
  return fromTerminationMessage(pod, parseJobOutput);
}

/** A batch's summary line from its driver pod: each ended task's outcome (`tasks`). */
export function batchSummaryOfDriverPod(pod: V1Pod): BatchSummary | undefined {
  return fromTerminationMessage(pod, parseBatchSummary);
}

/** How a watched application ended: gone, timed out (and deleted), or a terminal state. */
type Ending =
  | { readonly kind: 'gone' | 'timeout'; readonly error: TaskError }
  | { readonly kind: 'ended'; readonly app: Record<string, unknown>; readonly status: AppStatus };

/**
 * Each task's end from a batch's summary (`tasks`, by task hash). A task without an outcome
 * did not end in the batch — the session died first, or the task was not in the application
 * (a follower's request after a crash names only its own task; `batchTaskList` left it out) —
 * and is lost, retryable, unless the batch as a whole was bad input; the driver killed for
 * memory says so (its next attempt grows). `failed`: the application's own error, if it failed.
 * Pure: the decision, apart from reading the pod.
 */
export function batchEnds(
  request: Pick<BatchRunRequest, 'tasks'>,
  summary: BatchSummary | undefined,
  failed: TaskError | undefined,
): Map<string, RunEnd> {
  const whole =
    summary?.error !== undefined && summary.exitCode === JobExitCode.badInput
      ? summary.error
      : failed?.kind === OUT_OF_MEMORY_KIND
        ? failed
        : errorWithoutResult(
            'lost',
            `the batch ended without a result for this task${failed === undefined ? '' : ` (${failed.message})`}`,
            true,
          );
  const ends = new Map<string, RunEnd>();
  for (const { taskRun, task } of request.tasks) {
    const outcome = summary?.tasks?.[taskHash(task.id)];
    if (outcome === undefined) {
      ends.set(taskRun, { ok: false, error: whole });
    } else if (outcome.exitCode === JobExitCode.ok) {
      // The figures a local run's full result gives (`outcomeFigures`), so the task's
      // ledger entry and sizing sample are the same on both runners.
      ends.set(taskRun, { ok: true, figures: outcomeFigures(outcome) });
    } else {
      const known = errorFromExitCode(outcome.exitCode, `exit code ${String(outcome.exitCode)}`);
      const error: Partial<TaskError> = outcome.error ?? {};
      ends.set(taskRun, {
        ok: false,
        error: {
          kind: error.kind ?? known.kind,
          message: error.message ?? known.message,
          retryable: error.retryable ?? known.retryable,
        },
      });
    }
  }
  return ends;
}

function codeOf(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

/** The real operator reports `driver container failed with ExitCode: 4, Reason: Error`. */
export function errorFromStatus(status: AppStatus): TaskError {
  const message = status.errorMessage ?? `SparkApplication ended ${status.state}`;
  if (status.state === SparkAppState.submissionFailed) {
    // Not admitted (quota, image, RBAC): nothing ran, trying again later may work.
    return { kind: 'submission-failed', message, retryable: true };
  }
  const exit = /ExitCode:\s*(\d+)/.exec(message);
  return exit?.[1] === undefined
    ? { kind: 'failed', message, retryable: false }
    : errorFromExitCode(Number(exit[1]), message);
}

/**
 * Runs a task as a SparkApplication (`sparkoperator.k8s.io/v1beta2`) in the binding's
 * namespace. The name is deterministic per (task run, attempt): after a restart `create` answers
 * 409 and the runner follows the existing application instead of launching another.
 *
 * One application per batch, always: no `appendToBatch`, so no resident session (ADR 0045,
 * 0046) — the driver cannot read what the dispatcher writes without a new right (a ConfigMap
 * it watches) or a Spark Connect server, which is undecided. `TaskWorker` asks for a resident
 * session only of a runner that has `appendToBatch`.
 */
export class SparkOperatorRunner implements SparkRunner {
  readonly kind = 'spark-operator';
  readonly #api: CustomObjectsApi;
  readonly #core: CoreV1Api;
  readonly #app: ApplicationOptions;
  readonly #pollMs: number;

  constructor(options: SparkOperatorRunnerOptions) {
    this.#api = kubeClients(options.kubeConfig).make(CustomObjectsApi);
    this.#core = kubeClients(options.kubeConfig).make(CoreV1Api);
    this.#pollMs = options.pollMs ?? 2_000;
    this.#app = {
      image: options.image ?? 'ghcr.io/icepack/spark-job:latest',
      mainApplicationFile:
        options.mainApplicationFile ?? 'local:///opt/icepack/jobs/spark/icepack_job.py',
      sparkVersion: options.sparkVersion ?? '4.0.1',
      serviceAccount: options.serviceAccount ?? 'icepack-spark',
      configMap: options.configMap ?? 'icepack-spark',
      timeToLiveSeconds: options.timeToLiveSeconds ?? 86_400,
      ...(options.secretName === undefined ? {} : { secretName: options.secretName }),
    };
  }

  async #get(namespace: string, name: string): Promise<Record<string, unknown> | undefined> {
    try {
      return (await this.#api.getNamespacedCustomObject({
        ...SPARK_API,
        namespace,
        name,
      })) as Record<string, unknown>;
    } catch (error) {
      if (codeOf(error) === 404) return undefined;
      throw error;
    }
  }

  runName(key: RunKey): string {
    return applicationName(key.task, key.taskRun, key.attempt);
  }

  location(request: RunKey & Pick<RunRequest, 'binding'>): RunLocation {
    return operatorRunLocation(request.binding.namespace, this.runName(request), this.kind);
  }

  async isLaunched(request: RunKey & Pick<RunRequest, 'binding'>): Promise<boolean> {
    return (await this.#get(request.binding.namespace, this.runName(request))) !== undefined;
  }

  /** Creates the application, or finds it when it exists (409): `true` when it existed. */
  async submit(request: RunRequest): Promise<{ name: string; existed: boolean }> {
    return this.#create(request.binding.namespace, sparkApplication(request, this.#app));
  }

  async #create(
    namespace: string,
    body: Record<string, unknown>,
  ): Promise<{ name: string; existed: boolean }> {
    const name = (body.metadata as { name: string }).name;
    try {
      await this.#api.createNamespacedCustomObject({ ...SPARK_API, namespace, body });
      return { name, existed: false };
    } catch (error) {
      if (codeOf(error) === 409) return { name, existed: true };
      throw error;
    }
  }

  batchName(key: BatchRunKey): string {
    return batchApplicationName(key);
  }

  batchLocation(key: BatchRunKey & Pick<RunRequest, 'binding'>): RunLocation {
    return operatorRunLocation(key.binding.namespace, this.batchName(key), this.kind);
  }

  /**
   * One SparkApplication for the batch, named from (batch run, attempt): a second call — a
   * restarted dispatcher, or a held task's job following the batch for itself — gets 409 and
   * follows it, never launches it again. Each task's end comes from the batch's summary in the
   * driver's termination message; a task without one is lost (retryable).
   */
  async runBatch(request: BatchRunRequest): Promise<BatchOutcome> {
    const credentials = jobCredentials(request, this.#app);
    if (!credentials.ok) {
      const error: TaskError = {
        kind: 'bad-input',
        message: credentials.problem,
        retryable: false,
      };
      return {
        ends: new Map<string, RunEnd>(request.tasks.map((t) => [t.taskRun, { ok: false, error }])),
        reattached: false,
      };
    }
    const { namespace } = request.binding;
    const { name, existed } = await this.#create(
      namespace,
      sparkBatchApplication(request, this.#app),
    );
    request.onSubmitted?.();
    const ending = await this.#awaitEnd(namespace, name, request.timeoutMs);
    if (ending.kind !== 'ended') {
      const ends = new Map<string, RunEnd>(
        request.tasks.map((t) => [t.taskRun, { ok: false, error: ending.error }]),
      );
      return { ends, reattached: existed };
    }
    const { state } = ending.status;
    if (state === SparkAppState.submissionFailed) {
      const error = errorFromStatus(ending.status);
      const ends = new Map<string, RunEnd>(
        request.tasks.map((t) => [t.taskRun, { ok: false, error }]),
      );
      return { ends, reattached: existed };
    }
    const pod = await this.#driverPod(namespace, ending.app);
    const summary = pod === undefined ? undefined : batchSummaryOfDriverPod(pod);
    const failed = state === SparkAppState.failed ? errorFromStatus(ending.status) : undefined;
    return { ends: batchEnds(request, summary, failed), reattached: existed };
  }

  async run(request: RunRequest): Promise<RunOutcome> {
    // A credential no pod can reference: the job would run unauthenticated. Nothing is created.
    const credentials = jobCredentials(request, this.#app);
    if (!credentials.ok) {
      return {
        ok: false,
        error: { kind: 'bad-input', message: credentials.problem, retryable: false },
        reattached: false,
      };
    }
    const { name, existed } = await this.submit(request);
    request.onSubmitted?.();
    const end = await this.#follow(request.binding.namespace, name, request.timeoutMs);
    return { ...end, reattached: existed };
  }

  /**
   * The job's result line from the driver pod's status; undefined when it cannot be read (the
   * pod gone, no right to read it, an older job): a succeeded run's ledger then lacks the job's
   * own figures, a failed run's error comes from the operator's status (docs/dispatcher.md).
   */
  async #jobOutput(
    namespace: string,
    app: Record<string, unknown>,
  ): Promise<JobOutput | undefined> {
    const pod = await this.#driverPod(namespace, app);
    return pod === undefined ? undefined : jobOutputOfDriverPod(pod);
  }

  /** The application's driver pod; undefined when it cannot be read (gone, no right). */
  async #driverPod(namespace: string, app: Record<string, unknown>): Promise<V1Pod | undefined> {
    const pod = (app.status as { driverInfo?: { podName?: string } } | undefined)?.driverInfo
      ?.podName;
    if (pod === undefined || pod === '') return undefined;
    try {
      return await this.#core.readNamespacedPod({ name: pod, namespace });
    } catch {
      return undefined;
    }
  }

  async #follow(namespace: string, name: string, timeoutMs: number): Promise<RunEnd> {
    const ending = await this.#awaitEnd(namespace, name, timeoutMs);
    if (ending.kind !== 'ended') return { ok: false, error: ending.error };
    const { app, status } = ending;
    if (status.state === SparkAppState.completed) {
      const output = await this.#jobOutput(namespace, app);
      return output?.ok === true ? { ok: true, result: output } : { ok: true };
    }
    if (status.state === SparkAppState.failed) {
      // The job's own error (kind, message, retryable) when it wrote one, as the local
      // runner reports it; the operator's status only knows the exit code.
      const output = await this.#jobOutput(namespace, app);
      return { ok: false, error: output?.ok === false ? output.error : errorFromStatus(status) };
    }
    return { ok: false, error: errorFromStatus(status) };
  }

  /**
   * Polls the application until it is in a terminal state, is gone, or has run past its
   * timeout (then it is deleted).
   */
  async #awaitEnd(namespace: string, name: string, timeoutMs: number): Promise<Ending> {
    const terminal: readonly string[] = Object.values(SparkAppState);
    for (;;) {
      const app = await this.#get(namespace, name);
      if (app === undefined) {
        return {
          kind: 'gone',
          error: { kind: 'lost', message: `SparkApplication ${name} disappeared`, retryable: true },
        };
      }
      const status = statusOf(app);
      if (terminal.includes(status.state)) return { kind: 'ended', app, status };
      const created = Date.parse(
        String((app.metadata as { creationTimestamp?: string }).creationTimestamp ?? ''),
      );
      // The deadline counts from creation, so a re-attached run keeps its original timeout.
      if (Number.isFinite(created) && Date.now() > created + timeoutMs) {
        await this.#api
          .deleteNamespacedCustomObject({ ...SPARK_API, namespace, name })
          .catch(() => undefined);
        return {
          kind: 'timeout',
          error: {
            kind: 'timeout',
            message: `cancelled after ${String(Math.round(timeoutMs / 1000))}s (SparkApplication ${name} deleted)`,
            retryable: false,
          },
        };
      }
      await sleep(this.#pollMs);
    }
  }
}
