import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  ApiException,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Container,
  type V1EnvVar,
  type V1Pod,
  type V1PodStatus,
} from '@kubernetes/client-node';
import { infraEnv } from '../infra/env.ts';
import { adminKubeConfig } from './control-plane.ts';
import { driverCommand, parseSparkProperties } from './driver-command.ts';
import type { DriverCommand } from './driver-command.ts';

const repoRoot = resolve(import.meta.dirname, '..', '..', '..');

/** What a kubelet keeps of a termination-message file: its first 4096 bytes ('' if none). */
async function terminationMessage(path: string): Promise<string> {
  const file = await open(path, 'r').catch(() => undefined);
  if (file === undefined) return '';
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await file.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await file.close();
  }
}
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/** Where the fake spark-submit mounts the ConfigMap with `spark.properties`, as Spark does. */
const SPARK_CONF_DIR = '/opt/spark/conf';

export interface KubeletStandinOptions {
  /** Default: the admin KubeConfig of the local control plane (the kubelet reads secrets). */
  readonly kubeConfig?: KubeConfig;
  /** The kwok node whose driver pods it runs. Default: the local control plane's node. */
  readonly node?: string;
  /**
   * Only driver pods in these namespaces: the control plane is shared by parallel test runs,
   * and each should run its own drivers. Default: every namespace.
   */
  readonly namespaces?: readonly string[];
  /** `spark.jars` added to every run (the Iceberg runtime the image would carry). */
  readonly sparkJars?: string;
  /** Paths inside the image → paths here. Default `/opt/icepack/` → this checkout. */
  readonly imagePaths?: Readonly<Record<string, string>>;
  /** `local[n]` cap. Default 2. */
  readonly maxCores?: number;
  /** The driver JVM's heap here, whatever the pod asked for (the machine is small). Default 1g. */
  readonly driverMemory?: string;
  /** Where each driver's output goes (`<namespace>_<pod>.log`). Default `$ICEPACK_LOGS/kubelet-standin`. */
  readonly logDir?: string;
  readonly pollMs?: number;
}

/** One driver pod the stand-in ran. */
export interface DriverRun {
  readonly namespace: string;
  readonly pod: string;
  readonly uid: string;
  readonly command: DriverCommand;
  readonly logFile: string;
  /** Set when the process ended: its exit code (128 + signal when killed). */
  exitCode?: number;
}

export interface KubeletStandin {
  /** Every driver started, in order (kept after the pod is gone). */
  readonly runs: readonly DriverRun[];
  /** Stops watching and kills the drivers still running (their pods stay as they are). */
  stop(): Promise<void>;
}

const codeOf = (error: unknown): number | undefined =>
  error instanceof ApiException ? error.code : undefined;

/** The container's environment could not be resolved yet (missing Secret/ConfigMap): retry. */
class NotReadyYet extends Error {}

const now = (): string => new Date().toISOString();

/**
 * Kubernetes dependent environment variables: `$(NAME)` in a container's env value is the
 * value of a variable defined before it in the list (left as is when there is none), `$$` is a
 * literal `$` — as the kubelet expands them.
 */
export function expandEnvReferences(
  value: string,
  defined: Readonly<Record<string, string>>,
): string {
  return value.replace(/\$\$|\$\(([-._a-zA-Z0-9]+)\)/g, (match, name: string | undefined) =>
    name === undefined ? '$' : (defined[name] ?? match),
  );
}

/**
 * A stand-in for the kubelet of the kwok node (test infrastructure, not a Kubernetes part): it
 * watches the Spark driver pods scheduled there and runs each for real, with the local
 * `spark-submit` (`--master local[n]`), from what the pod carries — the job file and arguments of
 * the container's args, the Spark conf of the `spark.properties` ConfigMap mounted at
 * `/opt/spark/conf`, the container's env (Secret and ConfigMap references resolved like the
 * kubelet does). It writes the pod's status as a kubelet would: Running when the process starts,
 * then Succeeded (exit 0) or Failed with the container's exit code, so the real Spark operator
 * moves the SparkApplication through RUNNING to COMPLETED or FAILED. A pod is claimed with an
 * optimistic-concurrency status write, so two stand-ins never run the same driver. Executor pods
 * do not exist: local mode runs the executors inside the driver.
 */
export async function startKubeletStandin(
  options: KubeletStandinOptions = {},
): Promise<KubeletStandin> {
  const infra = infraEnv();
  const kc = options.kubeConfig ?? adminKubeConfig(infra.kube);
  const core = kc.makeApiClient(CoreV1Api);
  const node = options.node ?? infra.kube.node;
  const logDir =
    options.logDir ??
    join(process.env.ICEPACK_LOGS ?? join(infra.runDir, 'logs'), 'kubelet-standin');
  const imagePaths = options.imagePaths ?? { '/opt/icepack/': `${repoRoot}/` };
  const sparkJars = options.sparkJars ?? infra.sparkJars;
  await mkdir(logDir, { recursive: true });

  const runs: DriverRun[] = [];
  const children = new Map<string, { child: ChildProcess; closed: Promise<void> }>();
  let busy = false;
  let stopped = false;

  const readSecretKey = async (namespace: string, name: string, key: string): Promise<string> => {
    try {
      const secret = await core.readNamespacedSecret({ name, namespace });
      const value = secret.data?.[key];
      if (value !== undefined) return Buffer.from(value, 'base64').toString('utf8');
      if (secret.stringData?.[key] !== undefined) return secret.stringData[key];
    } catch (error) {
      if (codeOf(error) !== 404) throw error;
    }
    throw new NotReadyYet(`secret ${namespace}/${name} key ${key}`);
  };
  const readConfigMap = async (
    namespace: string,
    name: string,
  ): Promise<Record<string, string>> => {
    try {
      return (await core.readNamespacedConfigMap({ name, namespace })).data ?? {};
    } catch (error) {
      if (codeOf(error) === 404) throw new NotReadyYet(`configmap ${namespace}/${name}`);
      throw error;
    }
  };

  const resolveEnv = async (
    pod: V1Pod,
    container: V1Container,
  ): Promise<Record<string, string>> => {
    const namespace = pod.metadata?.namespace ?? 'default';
    const env: Record<string, string> = {};
    for (const from of container.envFrom ?? []) {
      const source = from.secretRef
        ? Object.fromEntries(
            Object.entries(
              (await core.readNamespacedSecret({ name: from.secretRef.name ?? '', namespace }))
                .data ?? {},
            ).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
          )
        : from.configMapRef
          ? await readConfigMap(namespace, from.configMapRef.name ?? '')
          : {};
      for (const [k, v] of Object.entries(source)) env[`${from.prefix ?? ''}${k}`] = v;
    }
    const fieldValue = (path: string): string =>
      ({
        'metadata.name': pod.metadata?.name ?? '',
        'metadata.namespace': namespace,
        'status.podIP': '127.0.0.1',
        'status.hostIP': '127.0.0.1',
        'spec.nodeName': node,
        'spec.serviceAccountName': pod.spec?.serviceAccountName ?? '',
      })[path] ?? '';
    for (const e of container.env ?? ([] as V1EnvVar[])) {
      const ref = e.valueFrom;
      if (ref?.secretKeyRef) {
        env[e.name] = await readSecretKey(
          namespace,
          ref.secretKeyRef.name ?? '',
          ref.secretKeyRef.key,
        );
      } else if (ref?.configMapKeyRef) {
        const data = await readConfigMap(namespace, ref.configMapKeyRef.name ?? '');
        const value = data[ref.configMapKeyRef.key];
        if (value === undefined) throw new NotReadyYet(`configmap key ${ref.configMapKeyRef.key}`);
        env[e.name] = value;
      } else if (ref?.fieldRef) {
        env[e.name] = fieldValue(ref.fieldRef.fieldPath);
      } else {
        env[e.name] = expandEnvReferences(e.value ?? '', env);
      }
    }
    return env;
  };

  /** The `spark.properties` the pod mounts at /opt/spark/conf. */
  const sparkProperties = async (
    pod: V1Pod,
    container: V1Container,
  ): Promise<Record<string, string>> => {
    const mount = (container.volumeMounts ?? []).find((m) => m.mountPath === SPARK_CONF_DIR);
    const volume = pod.spec?.volumes?.find((v) => v.name === mount?.name);
    if (volume?.configMap?.name === undefined) return {};
    const data = await readConfigMap(pod.metadata?.namespace ?? 'default', volume.configMap.name);
    return parseSparkProperties(data['spark.properties'] ?? '');
  };

  const writeStatus = async (pod: V1Pod, status: V1PodStatus): Promise<void> => {
    await core.patchNamespacedPodStatus(
      {
        name: pod.metadata?.name ?? '',
        namespace: pod.metadata?.namespace ?? '',
        body: { status },
      },
      merge,
    );
  };

  const terminated = (
    container: V1Container,
    startedAt: string,
    exitCode: number,
    message: string,
  ): V1PodStatus => ({
    phase: exitCode === 0 ? 'Succeeded' : 'Failed',
    conditions: [
      { type: 'Ready', status: 'False', lastTransitionTime: new Date() },
      { type: 'ContainersReady', status: 'False', lastTransitionTime: new Date() },
    ],
    containerStatuses: [
      {
        name: container.name,
        image: container.image ?? '',
        imageID: '',
        ready: false,
        restartCount: 0,
        started: false,
        state: {
          terminated: {
            exitCode,
            reason: exitCode === 0 ? 'Completed' : 'Error',
            ...(message === '' ? {} : { message }),
            startedAt: new Date(startedAt),
            finishedAt: new Date(),
          },
        },
      },
    ],
  });

  const start = async (pod: V1Pod): Promise<void> => {
    const namespace = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    const uid = pod.metadata?.uid ?? '';
    const container =
      pod.spec?.containers.find((c) => c.name === 'spark-kubernetes-driver') ??
      pod.spec?.containers[0];
    if (container === undefined) return;
    let env: Record<string, string>;
    let properties: Record<string, string>;
    try {
      properties = await sparkProperties(pod, container);
      env = await resolveEnv(pod, container);
    } catch (error) {
      if (error instanceof NotReadyYet) return; // like a kubelet: try again later
      throw error;
    }
    const command = driverCommand({
      args: container.args ?? [],
      properties,
      imagePaths,
      maxCores: options.maxCores ?? 2,
      driverMemory: options.driverMemory ?? '1g',
      ...(sparkJars === undefined ? {} : { sparkJars }),
    });
    const startedAt = now();
    // Claim it: a status write conditioned on the version read. Another stand-in, or any other
    // change since, makes it fail with 409 and the pod is looked at again next time.
    try {
      await core.replaceNamespacedPodStatus({
        name,
        namespace,
        body: {
          ...pod,
          status: {
            ...pod.status,
            phase: 'Running',
            startTime: new Date(startedAt),
            conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
              type,
              status: 'True',
              lastTransitionTime: new Date(startedAt),
            })),
            containerStatuses: [
              {
                name: container.name,
                image: container.image ?? '',
                imageID: '',
                ready: true,
                restartCount: 0,
                started: true,
                state: { running: { startedAt: new Date(startedAt) } },
              },
            ],
          },
        },
      });
    } catch (error) {
      if (codeOf(error) === 409 || codeOf(error) === 404) return;
      throw error;
    }
    const logFile = join(logDir, `${namespace}_${name}.log`);
    // The container's termination-message file, which a kubelet mounts from the host at
    // `terminationMessagePath`: here a file beside the log, put where the arguments name it.
    const terminationPath = container.terminationMessagePath ?? '/dev/termination-log';
    const terminationLog = join(logDir, `${namespace}_${name}.termination-log`);
    const submitArgs = command.sparkSubmitArgs.map((arg) =>
      arg === terminationPath ? terminationLog : arg,
    );
    const python = infra.python;
    const childEnv: NodeJS.ProcessEnv = {
      ...process.env,
      ...env,
      PYSPARK_PYTHON: python,
      PYSPARK_DRIVER_PYTHON: python,
      SPARK_LOCAL_IP: '127.0.0.1',
    };
    // In-image locations that do not exist here.
    delete childEnv.SPARK_CONF_DIR;
    delete childEnv.SPARK_DRIVER_BIND_ADDRESS;
    const out = createWriteStream(logFile, { flags: 'a' });
    const child = spawn(join(infra.cacheDir, 'venv', 'bin', 'spark-submit'), submitArgs, {
      env: childEnv,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.pipe(out);
    child.stderr.pipe(out);
    const run: DriverRun = { namespace, pod: name, uid, command, logFile };
    runs.push(run);
    const closed = new Promise<void>((done) => {
      child.on('close', (code, signal) => {
        out.end();
        const exitCode = code ?? 128 + (signal === 'SIGKILL' ? 9 : 15);
        run.exitCode = exitCode;
        const current = children.get(uid);
        children.delete(uid);
        // Killed because the pod went away (or the stand-in stopped): nothing to report.
        if (current?.child !== child || stopped) return done();
        terminationMessage(terminationLog)
          .then((message) => writeStatus(pod, terminated(container, startedAt, exitCode, message)))
          .then(
            () => done(),
            () => done(),
          );
      });
    });
    children.set(uid, { child, closed });
  };

  const kill = (uid: string): void => {
    const entry = children.get(uid);
    if (entry === undefined) return;
    children.delete(uid);
    try {
      if (entry.child.pid !== undefined) process.kill(-entry.child.pid, 'SIGKILL');
    } catch {
      entry.child.kill('SIGKILL');
    }
  };

  const listDrivers = async (): Promise<V1Pod[]> => {
    const selectors = {
      fieldSelector: `spec.nodeName=${node}`,
      labelSelector: 'spark-role=driver',
    };
    if (options.namespaces === undefined) {
      return (await core.listPodForAllNamespaces(selectors)).items;
    }
    const lists = await Promise.all(
      options.namespaces.map((namespace) => core.listNamespacedPod({ namespace, ...selectors })),
    );
    return lists.flatMap((list) => list.items);
  };

  const tick = async (): Promise<void> => {
    if (busy || stopped) return;
    busy = true;
    try {
      const pods = await listDrivers();
      const live = new Set<string>();
      for (const pod of pods) {
        const uid = pod.metadata?.uid ?? '';
        if (pod.metadata?.deletionTimestamp === undefined) live.add(uid);
        if (
          pod.status?.phase === 'Pending' &&
          pod.metadata?.deletionTimestamp === undefined &&
          !children.has(uid)
        ) {
          await start(pod);
        }
      }
      // A deleted pod's container is killed, as the kubelet does.
      for (const uid of [...children.keys()]) if (!live.has(uid)) kill(uid);
    } catch {
      // The API server is shared and may be slow; the next tick tries again.
    } finally {
      busy = false;
    }
  };

  const timer = setInterval(() => void tick(), options.pollMs ?? 250);
  return {
    runs,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      const pending = [...children.values()].map((entry) => entry.closed);
      for (const uid of [...children.keys()]) kill(uid);
      await Promise.all(pending);
    },
  };
}
