import { parseCpuMillicores, parseMemoryBytes, parseSparkMemoryBytes } from '@icepack/types';

/**
 * What a namespace's SparkApplications would use of a ResourceQuota, standing in for the
 * quota controller counting their pods. An approximation, documented in docs/testing.md:
 * - an application that is not finished (state other than COMPLETED, FAILED,
 *   SUBMISSION_FAILED) has one driver pod and `executor.instances` executor pods
 *   (`dynamicAllocation.maxExecutors` when dynamic allocation is on), all running;
 * - a pod requests `coreRequest` or `cores` cpu and `memory + memoryOverhead` memory, the
 *   overhead defaulting like Spark's: max(384 MiB, factor × memory), factor 0.4 for
 *   Python/R applications and 0.1 otherwise (or `memoryOverheadFactor`);
 * - limits: `coreLimit` or the cpu request, and the memory request (Spark sets both equal);
 * - `count/sparkapplications.sparkoperator.k8s.io` counts every application, finished or
 *   not, as object-count quota does.
 */
export const FINISHED_STATES: readonly string[] = ['COMPLETED', 'FAILED', 'SUBMISSION_FAILED'];

const MIN_OVERHEAD = 384 * 2 ** 20;

export type { AppUsage };

export interface Usage {
  /** Keyed like quota resources: `requests.cpu`, `limits.memory`, `pods`, `count/…`. */
  readonly cpuRequestMillis: number;
  readonly cpuLimitMillis: number;
  readonly memoryBytes: number;
  readonly pods: number;
  readonly applications: number;
}

type Obj = Record<string, unknown>;

function obj(value: unknown): Obj {
  return typeof value === 'object' && value !== null ? (value as Obj) : {};
}

function memory(text: unknown, fallback: string): number {
  const value = typeof text === 'string' ? text : fallback;
  try {
    return parseSparkMemoryBytes(value);
  } catch {
    return parseMemoryBytes(value);
  }
}

function cpu(text: unknown, fallback: number): number {
  if (typeof text === 'string') return parseCpuMillicores(text);
  if (typeof text === 'number') return Math.ceil(text * 1000);
  return fallback * 1000;
}

interface Pod {
  readonly cpuRequest: number;
  readonly cpuLimit: number;
  readonly memory: number;
}

function podOf(role: Obj, type: unknown, factorText: unknown): Pod {
  const cpuRequest = role.coreRequest !== undefined ? cpu(role.coreRequest, 1) : cpu(role.cores, 1);
  const cpuLimit = role.coreLimit !== undefined ? cpu(role.coreLimit, 1) : cpuRequest;
  const heap = memory(role.memory, '1g');
  const factor =
    typeof factorText === 'string'
      ? Number(factorText)
      : type === 'Python' || type === 'R'
        ? 0.4
        : 0.1;
  const overhead =
    role.memoryOverhead !== undefined
      ? memory(role.memoryOverhead, '0')
      : Math.max(MIN_OVERHEAD, Math.ceil(heap * factor));
  return { cpuRequest, cpuLimit, memory: heap + overhead };
}

export function isFinished(app: Obj): boolean {
  const state = obj(obj(app.status).applicationState).state;
  return typeof state === 'string' && FINISHED_STATES.includes(state);
}

/** What one unfinished application's pods request; `undefined` for a finished one. */
interface AppUsage {
  readonly cpuRequestMillis: number;
  readonly cpuLimitMillis: number;
  readonly memoryBytes: number;
  readonly pods: number;
}

function appUsage(app: Obj): AppUsage | undefined {
  if (isFinished(app)) return undefined;
  const spec = obj(app.spec);
  const driver = podOf(obj(spec.driver), spec.type, spec.memoryOverheadFactor);
  const executor = podOf(obj(spec.executor), spec.type, spec.memoryOverheadFactor);
  const dynamic = obj(spec.dynamicAllocation);
  const instancesValue =
    dynamic.enabled === true ? dynamic.maxExecutors : obj(spec.executor).instances;
  const instances = typeof instancesValue === 'number' ? instancesValue : 1;
  return {
    cpuRequestMillis: driver.cpuRequest + executor.cpuRequest * instances,
    cpuLimitMillis: driver.cpuLimit + executor.cpuLimit * instances,
    memoryBytes: driver.memory + executor.memory * instances,
    pods: 1 + instances,
  };
}

/**
 * What `apps` use together. With a `cache`, each application's usage is computed once per
 * object: for callers whose objects never change once seen (the store replaces an object on
 * every write), so that recounting a namespace does not re-parse every application.
 */
export function sparkUsage(
  apps: readonly Obj[],
  cache?: WeakMap<Obj, AppUsage | undefined>,
): Usage {
  let cpuRequestMillis = 0;
  let cpuLimitMillis = 0;
  let memoryBytes = 0;
  let pods = 0;
  for (const app of apps) {
    let usage: AppUsage | undefined;
    if (cache?.has(app) === true) usage = cache.get(app);
    else {
      usage = appUsage(app);
      cache?.set(app, usage);
    }
    if (usage === undefined) continue;
    cpuRequestMillis += usage.cpuRequestMillis;
    cpuLimitMillis += usage.cpuLimitMillis;
    memoryBytes += usage.memoryBytes;
    pods += usage.pods;
  }
  return { cpuRequestMillis, cpuLimitMillis, memoryBytes, pods, applications: apps.length };
}

export function formatCpu(millis: number): string {
  return millis % 1000 === 0 ? String(millis / 1000) : `${millis}m`;
}

export function formatMemory(bytes: number): string {
  for (const [suffix, size] of [
    ['Gi', 2 ** 30],
    ['Mi', 2 ** 20],
    ['Ki', 2 ** 10],
  ] as const) {
    if (bytes !== 0 && bytes % size === 0) return `${bytes / size}${suffix}`;
  }
  return String(bytes);
}

/** `status.used` for the resources a quota's `hard` names; unknown resources count 0. */
export function quotaUsed(
  hard: Readonly<Record<string, string>>,
  usage: Usage,
): Record<string, string> {
  const used: Record<string, string> = {};
  for (const resource of Object.keys(hard)) {
    switch (resource) {
      case 'cpu':
      case 'requests.cpu':
        used[resource] = formatCpu(usage.cpuRequestMillis);
        break;
      case 'limits.cpu':
        used[resource] = formatCpu(usage.cpuLimitMillis);
        break;
      case 'memory':
      case 'requests.memory':
      case 'limits.memory':
        used[resource] = formatMemory(usage.memoryBytes);
        break;
      case 'pods':
      case 'count/pods':
        used[resource] = String(usage.pods);
        break;
      case 'count/sparkapplications.sparkoperator.k8s.io':
        used[resource] = String(usage.applications);
        break;
      default:
        used[resource] = '0';
    }
  }
  return used;
}
