import type { RunLocation, Task } from '@icepack/types';
import { jobSparkConf } from '../domain/job-catalog.ts';
import { kubernetesJobCredentials, type JobEnvVar } from '../domain/job-credentials.ts';
import type { BatchRunKey, BatchRunRequest, RunRequest } from './spark-runner.ts';
import { taskHash } from './run-key.ts';

/** Kubernetes' default `terminationMessagePath` of a container. */
export const TERMINATION_MESSAGE_PATH = '/dev/termination-log';

export const SPARK_API = {
  group: 'sparkoperator.k8s.io',
  version: 'v1beta2',
  plural: 'sparkapplications',
} as const;

export const Labels = {
  taskId: 'icepack.dev/task-id',
  runId: 'icepack.dev/run-id',
  catalog: 'icepack.dev/catalog',
  taskType: 'icepack.dev/task-type',
  attempt: 'icepack.dev/attempt',
  managedBy: 'app.kubernetes.io/managed-by',
} as const;

export const Annotations = {
  traceparent: 'icepack.dev/traceparent',
  taskId: 'icepack.dev/task-id',
  /** A batch's task ids, one a line: which application ran a task. */
  taskIds: 'icepack.dev/task-ids',
} as const;

/** `icepack.dev/task-type` of a batch's application (no task type is called so). */
export const BATCH_TYPE = 'batch';

const MAX_NAME = 50;

function slug(text: string, max: number): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, max)
    .replace(/-+$/g, '');
}

/**
 * The SparkApplication name of a run: deterministic from (task run, attempt), DNS-1123, at
 * most 50 characters (the operator derives longer pod and service names from it; 63 is the
 * cap). `ip-merge-orders-3f9c2a1b7d4e-a1`: readable part + a hash that makes it unique. It is
 * the run's `runId` in task events. Never change the scheme lightly: a dispatcher re-attaches
 * to a run by this name, so a new scheme would relaunch the runs in flight during an upgrade.
 */
export function applicationName(
  task: Pick<Task, 'type' | 'table'>,
  taskRun: string,
  attempt: number,
): string {
  const tail = `-${taskHash(taskRun, 12)}-a${String(attempt)}`;
  const head = `ip-${task.type}`;
  const room = MAX_NAME - head.length - tail.length - 1;
  const readable = slug(task.table.name, room);
  return readable === '' ? `${head}${tail}` : `${head}-${readable}${tail}`;
}

/**
 * The SparkApplication name of a batch: `ip-batch-<hash of the batch run>-a<attempt>`,
 * deterministic per (batch run, attempt) as a run's is, so a restarted dispatcher re-attaches
 * by it (create → 409 → follow) and never launches the batch twice. The tasks' `runId`.
 */
export function batchApplicationName(key: BatchRunKey): string {
  return `ip-${BATCH_TYPE}-${taskHash(key.batchRun, 12)}-a${String(key.attempt)}`;
}

/** Tasks in one batch at most: the job's `MAX_BATCH_TASKS` (jobs/spark). */
export const MAX_BATCH_TASKS = 100;
/**
 * Bytes of the task list at most: it is one argument of the driver's command, and Linux takes
 * no argument over 128 KiB (`MAX_ARG_STRLEN`). 20 tasks of ~1.5 KB are a quarter of it.
 */
export const MAX_TASK_LIST_BYTES = 96 * 1024;

/**
 * The batch's task list as the driver gets it (`--tasks-json`): the longest prefix of `tasks`
 * within `MAX_BATCH_TASKS` and `MAX_TASK_LIST_BYTES`. A task left out is not in the
 * application: it has no outcome and ends lost (retryable), to run in a later batch or alone.
 */
export function batchTaskList(tasks: readonly Task[]): { json: string; count: number } {
  const parts: string[] = [];
  let bytes = 2; // the brackets
  for (const task of tasks.slice(0, MAX_BATCH_TASKS)) {
    const part = JSON.stringify(task);
    const more = Buffer.byteLength(part) + (parts.length > 0 ? 1 : 0);
    if (bytes + more > MAX_TASK_LIST_BYTES) break;
    parts.push(part);
    bytes += more;
  }
  return { json: `[${parts.join(',')}]`, count: parts.length };
}

/**
 * Where a SparkApplication's run is and where its logs are: the application, and its driver
 * pod's log (the Spark operator names the driver pod `<application>-driver`).
 */
export function operatorRunLocation(namespace: string, name: string, runner: string): RunLocation {
  return {
    runner,
    runId: name,
    application: { namespace, name },
    logs: [`kubectl logs -n ${namespace} ${name}-driver`],
  };
}

export interface ApplicationOptions {
  /** Image with Spark, Iceberg and the job. Default: the binding's `spark.image`, else this. */
  readonly image: string;
  /** Path of the job in the image. */
  readonly mainApplicationFile: string;
  readonly sparkVersion: string;
  /** Driver service account (the provisioner creates it per namespace). */
  readonly serviceAccount: string;
  /** Secret whose keys become the driver's env (catalog credentials); by name only. */
  readonly secretName?: string;
  /**
   * The provisioner's ConfigMap in the group's namespace (`catalog.json`,
   * `spark-defaults.conf`), mounted read-only in the driver at `CATALOG_CONFIG_DIR`.
   */
  readonly configMap: string;
  /** Finished applications are garbage-collected after this long. */
  readonly timeToLiveSeconds: number;
}

/** Where the driver finds the provisioner's ConfigMap. */
export const CATALOG_CONFIG_DIR = '/etc/icepack/catalog';

/** The container names Spark's submission client looks for in the pod templates. */
const DRIVER_CONTAINER = 'spark-kubernetes-driver';
const EXECUTOR_CONTAINER = 'spark-kubernetes-executor';

/**
 * Pod Security `restricted` (ADR 0009): the job image's user (185 in apache/spark images),
 * RuntimeDefault seccomp; per container no privilege escalation and no capability.
 */
export const RESTRICTED_POD_SECURITY = {
  runAsNonRoot: true,
  runAsUser: 185,
  runAsGroup: 185,
  fsGroup: 185,
  seccompProfile: { type: 'RuntimeDefault' },
} as const;
export const RESTRICTED_CONTAINER_SECURITY = {
  runAsNonRoot: true,
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
} as const;

/** A task the spark-operator runner cannot turn into a SparkApplication (names the field). */
export class JobSpecError extends Error {
  override readonly name = 'JobSpecError';
}

/**
 * The driver's credential environment, or why there is none (see `kubernetesJobCredentials`).
 * Pure; the runner asks before it creates anything.
 */
export function jobCredentials(
  request: Pick<RunRequest, 'catalog'>,
  options: Pick<ApplicationOptions, 'secretName'>,
) {
  return kubernetesJobCredentials(request.catalog.auth ?? { type: 'none' }, options.secretName);
}

/**
 * The SparkApplication object of a run. Pure; throws `JobSpecError` for a catalog credential a
 * pod cannot reference (`jobCredentials`).
 *
 * Everything that shapes the pods beyond Spark's own settings goes into the pod templates
 * (`driver.template`, `executor.template`): the Spark operator (v2.5.2) applies its
 * `securityContext`, `env`, `envFrom` and `sparkConfigMap` fields only through its mutating
 * webhook, and does not mutate pods made from a template at all, while templates reach
 * `spark-submit` either way (ADR 0012).
 */
export function sparkApplication(
  request: RunRequest,
  options: ApplicationOptions,
): Record<string, unknown> {
  const { task, binding } = request;
  const name = applicationName(task, request.taskRun, request.attempt);
  return applicationObject(
    request,
    {
      name,
      labels: {
        [Labels.taskId]: taskHash(task.id, 32),
        [Labels.runId]: name,
        [Labels.catalog]: binding.catalog,
        [Labels.taskType]: task.type,
        [Labels.attempt]: String(request.attempt),
        [Labels.managedBy]: 'icepack-dispatcher',
      },
      annotations: { [Annotations.taskId]: task.id },
      input: ['--task-json', JSON.stringify(task)],
    },
    options,
  );
}

/**
 * The SparkApplication of a batch (ADR 0027): the application of a run, with the task list
 * (`batchTaskList`) in the arguments as a single run has its task — tasks hold no secret —
 * and no result directory: each task's outcome comes back in the batch's summary, the
 * driver's termination message (`--termination-log`). Pure; throws `JobSpecError` as
 * `sparkApplication` does.
 */
export function sparkBatchApplication(
  request: BatchRunRequest,
  options: ApplicationOptions,
): Record<string, unknown> {
  const name = batchApplicationName(request);
  const { json, count } = batchTaskList(request.tasks.map((t) => t.task));
  return applicationObject(
    request,
    {
      name,
      labels: {
        [Labels.runId]: name,
        [Labels.catalog]: request.binding.catalog,
        [Labels.taskType]: BATCH_TYPE,
        [Labels.attempt]: String(request.attempt),
        [Labels.managedBy]: 'icepack-dispatcher',
      },
      annotations: {
        [Annotations.taskIds]: request.tasks
          .slice(0, count)
          .map((t) => t.task.id)
          .join('\n'),
      },
      input: ['--tasks-json', json],
    },
    options,
  );
}

/** What tells one application from another: its name, labels, annotations and task input. */
interface ApplicationIdentity {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** The job's arguments that give it its task (or tasks). */
  readonly input: readonly string[];
}

function applicationObject(
  request: Pick<RunRequest, 'size' | 'binding' | 'catalog' | 'traceparent'>,
  identity: ApplicationIdentity,
  options: ApplicationOptions,
): Record<string, unknown> {
  const { size, binding, catalog } = request;
  const { name, labels } = identity;
  const credentials = jobCredentials(request, options);
  if (!credentials.ok) throw new JobSpecError(credentials.problem);
  const env: JobEnvVar[] = [
    ...credentials.env,
    ...(request.traceparent === undefined
      ? []
      : [{ name: 'TRACEPARENT', value: request.traceparent }]),
  ];
  const envFrom =
    options.secretName === undefined ? [] : [{ secretRef: { name: options.secretName } }];
  const configVolume = 'icepack-catalog-config';
  const args = [
    ...identity.input,
    '--catalog-name',
    catalog.name,
    '--catalog-uri',
    catalog.uri,
    '--max-concurrent-file-group-rewrites',
    String(size.maxConcurrentFileGroupRewrites),
    ...(catalog.warehouse === undefined ? [] : ['--warehouse', catalog.warehouse]),
    // The job's result line as the driver container's termination message (Kubernetes'
    // default path): the pod status carries it back to the runner, no log access needed.
    '--termination-log',
    TERMINATION_MESSAGE_PATH,
  ];
  const overhead = (bytes: number): string =>
    `${String(Math.ceil(Math.max(bytes * 0.1, 384 * 2 ** 20) / 2 ** 20))}m`;
  return {
    apiVersion: `${SPARK_API.group}/${SPARK_API.version}`,
    kind: 'SparkApplication',
    metadata: {
      name,
      namespace: binding.namespace,
      labels,
      annotations: {
        ...identity.annotations,
        ...(request.traceparent === undefined
          ? {}
          : { [Annotations.traceparent]: request.traceparent }),
      },
    },
    spec: {
      type: 'Python',
      pythonVersion: '3',
      mode: 'cluster',
      image: binding.spark.image ?? options.image,
      imagePullPolicy: 'IfNotPresent',
      mainApplicationFile: options.mainApplicationFile,
      arguments: args,
      sparkVersion: options.sparkVersion,
      sparkConf: {
        'spark.sql.shuffle.partitions': String(size.executor.cores * size.executor.instances),
        // The catalog as the provisioner's spark-defaults.conf has it (no credential), the
        // group's conf, then the redaction regex (the same for the local runner).
        ...jobSparkConf(catalog, binding.spark.sparkConf),
      },
      restartPolicy: { type: 'Never' },
      timeToLiveSeconds: options.timeToLiveSeconds,
      driver: {
        cores: size.driver.cores,
        coreLimit: `${String(size.driver.cores * 1000)}m`,
        memory: size.driver.memory,
        memoryOverhead: overhead(size.driver.memoryBytes),
        serviceAccount: options.serviceAccount,
        labels,
        template: {
          spec: {
            securityContext: RESTRICTED_POD_SECURITY,
            volumes: [{ name: configVolume, configMap: { name: options.configMap } }],
            containers: [
              {
                name: DRIVER_CONTAINER,
                securityContext: RESTRICTED_CONTAINER_SECURITY,
                env,
                envFrom,
                volumeMounts: [
                  { name: configVolume, mountPath: CATALOG_CONFIG_DIR, readOnly: true },
                ],
              },
            ],
          },
        },
      },
      executor: {
        cores: size.executor.cores,
        coreLimit: `${String(size.executor.cores * 1000)}m`,
        instances: size.executor.instances,
        memory: size.executor.memory,
        memoryOverhead: overhead(size.executor.memoryBytes),
        labels,
        template: {
          spec: {
            securityContext: RESTRICTED_POD_SECURITY,
            containers: [
              { name: EXECUTOR_CONTAINER, securityContext: RESTRICTED_CONTAINER_SECURITY },
            ],
          },
        },
      },
    },
  };
}
