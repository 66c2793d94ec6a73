import type { CoreV1Api, V1ResourceQuota } from '@kubernetes/client-node';
import { parseCpuMillicores, parseMemoryBytes, type Binding } from '@icepack/types';
import type { QuotaRoom } from '../domain/sizing.ts';
import type { QuotaGate, QuotaRequest } from './quota.ts';

const CPU_KEYS = ['requests.cpu', 'cpu', 'limits.cpu'];
const MEMORY_KEYS = ['requests.memory', 'memory', 'limits.memory'];

function free(
  quota: V1ResourceQuota,
  keys: readonly string[],
  parse: (text: string) => number,
): number | undefined {
  let room: number | undefined;
  for (const key of keys) {
    const hard = quota.status?.hard?.[key] ?? quota.spec?.hard?.[key];
    if (hard === undefined) continue;
    const used = quota.status?.used?.[key] ?? '0';
    const left = parse(hard) - parse(used);
    room = room === undefined ? left : Math.min(room, left);
  }
  return room;
}

function min(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

/**
 * The bound namespace's ResourceQuotas (hard − used, the tightest of all quotas there).
 * Kubernetes enforces them; the dispatcher only avoids submitting a job that would not fit,
 * so `acquire` is a check and `release` has nothing to do.
 */
export class KubeQuota implements QuotaGate {
  readonly #core: CoreV1Api;

  constructor(core: CoreV1Api) {
    this.#core = core;
  }

  async room(binding: Binding): Promise<QuotaRoom> {
    const list = await this.#core.listNamespacedResourceQuota({ namespace: binding.namespace });
    let cpu: number | undefined;
    let memory: number | undefined;
    for (const quota of list.items) {
      cpu = min(cpu, free(quota, CPU_KEYS, parseCpuMillicores));
      memory = min(memory, free(quota, MEMORY_KEYS, parseMemoryBytes));
    }
    return {
      ...(cpu === undefined ? {} : { cpuMillicores: cpu }),
      ...(memory === undefined ? {} : { memoryBytes: memory }),
    };
  }

  /**
   * The fit was decided by sizing against `room()` just before; Kubernetes itself enforces
   * the quota at admission (a job that no longer fits ends SUBMISSION_FAILED, retryable).
   */
  acquire(_binding: Binding, _runId: string, _request: QuotaRequest): Promise<boolean> {
    return Promise.resolve(true);
  }

  release(): Promise<void> {
    return Promise.resolve();
  }
}
