import {
  CoreV1Api,
  makeInformer,
  type Informer,
  type KubeConfig,
  type ObjectCache,
  type V1ResourceQuota,
} from '@kubernetes/client-node';
import { parseCpuMillicores, parseMemoryBytes, type Binding } from '@icepack/types';
import type { QuotaRoom } from '../domain/sizing.ts';
import { kubeClients } from './kube-client.ts';
import type { QuotaGate, QuotaRequest, QuotaUsage } from './quota.ts';

const CPU_KEYS = ['requests.cpu', 'cpu', 'limits.cpu'];
const MEMORY_KEYS = ['requests.memory', 'memory', 'limits.memory'];

/** hard and used of the quota key with the least room left, if any quota sets one. */
function tightest(
  quotas: readonly V1ResourceQuota[],
  keys: readonly string[],
  parse: (text: string) => number,
): { hard: number; used: number } | undefined {
  let best: { hard: number; used: number } | undefined;
  for (const quota of quotas)
    for (const key of keys) {
      const hard = quota.status?.hard?.[key] ?? quota.spec?.hard?.[key];
      if (hard === undefined) continue;
      const pair = { hard: parse(hard), used: parse(quota.status?.used?.[key] ?? '0') };
      if (best === undefined || pair.hard - pair.used < best.hard - best.used) best = pair;
    }
  return best;
}

/** hard − used of the tightest quota, minus what `claimed` holds; no quota → unlimited. */
function roomOf(quotas: readonly V1ResourceQuota[], claimed: QuotaRequest): QuotaRoom {
  const cpu = tightest(quotas, CPU_KEYS, parseCpuMillicores);
  const memory = tightest(quotas, MEMORY_KEYS, parseMemoryBytes);
  return {
    ...(cpu === undefined ? {} : { cpuMillicores: cpu.hard - cpu.used - claimed.cpuMillicores }),
    ...(memory === undefined
      ? {}
      : { memoryBytes: memory.hard - memory.used - claimed.memoryBytes }),
  };
}

/**
 * The group's use for the console: the binding quota's `used` (the tightest, as `roomOf`
 * sizes against it) plus the claims whose pods do not show in it yet.
 */
export function useOf(quotas: readonly V1ResourceQuota[], claimed: QuotaRequest): QuotaUsage {
  const cpu = tightest(quotas, CPU_KEYS, parseCpuMillicores);
  const memory = tightest(quotas, MEMORY_KEYS, parseMemoryBytes);
  return {
    source: 'resource-quota',
    cpu: {
      usedMillicores: (cpu?.used ?? 0) + claimed.cpuMillicores,
      ...(cpu === undefined ? {} : { hardMillicores: cpu.hard }),
    },
    memory: {
      usedBytes: (memory?.used ?? 0) + claimed.memoryBytes,
      ...(memory === undefined ? {} : { hardBytes: memory.hard }),
    },
  };
}

/** Retries a failed watch after this long (the cache is not used meanwhile). */
const REWATCH_MS = 5_000;
/** `open` waits no longer than this for the first sync: a slow API server delays no start. */
const OPEN_WAIT_MS = 5_000;

/**
 * A namespace's ResourceQuotas kept current by a watch (client-node informer: list, then
 * watch from that version). `quotas()` is undefined until the list is in and while the watch
 * is broken: then the caller lists them itself.
 */
class QuotaWatch {
  /** The first start: resolves once the list is in and the watch runs, or it failed. */
  readonly started: Promise<void>;
  readonly #informer: Informer<V1ResourceQuota> & ObjectCache<V1ResourceQuota>;
  #synced = false;
  #failed = false;
  #stopped = false;
  #retry: NodeJS.Timeout | undefined;

  constructor(kubeConfig: KubeConfig, core: CoreV1Api, namespace: string) {
    this.#informer = makeInformer(
      kubeConfig,
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/resourcequotas`,
      () => core.listNamespacedResourceQuota({ namespace }),
    );
    this.#informer.on('error', () => {
      this.#synced = false;
      this.#failed = true;
      this.#scheduleStart();
    });
    this.started = this.#start();
  }

  quotas(): readonly V1ResourceQuota[] | undefined {
    return this.#synced ? this.#informer.list() : undefined;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retry);
    await this.#informer.stop();
  }

  async #start(): Promise<void> {
    this.#failed = false;
    // Resolves once the list is in and the watch runs; a failure is reported via 'error'.
    await this.#informer.start();
    this.#synced = !this.#failed && !this.#stopped;
  }

  #scheduleStart(): void {
    if (this.#stopped || this.#retry !== undefined) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      if (!this.#stopped) void this.#start();
    }, REWATCH_MS);
    this.#retry.unref();
  }
}

interface Claim {
  readonly namespace: string;
  readonly request: QuotaRequest;
  readonly until: number;
}

export interface KubeQuotaOptions {
  /**
   * How long a claim is taken off the room: the time the run's pods take to show in the
   * quota's `used` (the operator creates the driver, the driver its executors). Default 60 s.
   */
  readonly settleMs?: number;
}

/**
 * The bound namespace's ResourceQuotas (hard − used, the tightest of all quotas there), read
 * from a watch-fed cache instead of a list per dispatch.
 *
 * Kubernetes enforces the quota (on pods); the dispatcher only avoids submitting a job that
 * would not fit. A run's pods count in `used` only some seconds after its SparkApplication is
 * created, so each claim of this process is taken off the room until then (`settleMs`, or
 * its `release`): dispatches in flight here do not all size themselves into the same room.
 * Replicas do not see each other's claims; a job that lost that race ends
 * SUBMISSION_FAILED (retryable) or waits for executor pods.
 */
export class KubeQuota implements QuotaGate {
  readonly #kubeConfig: KubeConfig;
  readonly #core: CoreV1Api;
  readonly #settleMs: number;
  readonly #watches = new Map<string, QuotaWatch>();
  readonly #claims = new Map<string, Claim>();

  constructor(kubeConfig: KubeConfig, options: KubeQuotaOptions = {}) {
    this.#kubeConfig = kubeConfig;
    this.#core = kubeClients(kubeConfig).make(CoreV1Api);
    this.#settleMs = options.settleMs ?? 60_000;
  }

  #watch(namespace: string): QuotaWatch {
    let watch = this.#watches.get(namespace);
    if (watch === undefined) {
      watch = new QuotaWatch(this.#kubeConfig, this.#core, namespace);
      this.#watches.set(namespace, watch);
    }
    return watch;
  }

  async #quotas(namespace: string): Promise<readonly V1ResourceQuota[]> {
    return (
      this.#watch(namespace).quotas() ??
      (await this.#core.listNamespacedResourceQuota({ namespace })).items
    );
  }

  /**
   * Starts watching the binding's namespace and waits (at most `OPEN_WAIT_MS`) for the
   * first sync, so that a worker started with a backlog does not list per dispatch.
   */
  async open(binding: Binding): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.#watch(binding.namespace).started,
      new Promise<void>((resolve) => (timer = setTimeout(resolve, OPEN_WAIT_MS))),
    ]);
    clearTimeout(timer);
  }

  /** What this process's live claims in `namespace` hold, but `except`'s. */
  #claimed(namespace: string, except?: string): QuotaRequest {
    const now = Date.now();
    let cpuMillicores = 0;
    let memoryBytes = 0;
    for (const [id, claim] of this.#claims) {
      if (claim.until < now) this.#claims.delete(id);
      else if (claim.namespace === namespace && id !== except) {
        cpuMillicores += claim.request.cpuMillicores;
        memoryBytes += claim.request.memoryBytes;
      }
    }
    return { cpuMillicores, memoryBytes };
  }

  /** True once `namespace`'s quotas come from the watch (and while it runs). */
  watching(namespace: string): boolean {
    return this.#watches.get(namespace)?.quotas() !== undefined;
  }

  async room(binding: Binding): Promise<QuotaRoom> {
    const quotas = await this.#quotas(binding.namespace);
    return roomOf(quotas, this.#claimed(binding.namespace));
  }

  async usage(binding: Binding): Promise<QuotaUsage> {
    const quotas = await this.#quotas(binding.namespace);
    return useOf(quotas, this.#claimed(binding.namespace));
  }

  /** Claims `request` if it fits the room left by the quota and the other live claims. */
  async acquire(binding: Binding, runId: string, request: QuotaRequest): Promise<boolean> {
    const { namespace } = binding;
    const quotas = await this.#quotas(namespace);
    // No await between the check and the claim: concurrent acquires here cannot both pass.
    const room = roomOf(quotas, this.#claimed(namespace, runId));
    if (
      request.cpuMillicores > (room.cpuMillicores ?? Infinity) ||
      request.memoryBytes > (room.memoryBytes ?? Infinity)
    )
      return false;
    this.#claims.set(runId, { namespace, request, until: Date.now() + this.#settleMs });
    return true;
  }

  release(_binding: Binding, runId: string): Promise<void> {
    this.#claims.delete(runId);
    return Promise.resolve();
  }

  /** Stops the watches. */
  async close(): Promise<void> {
    await Promise.all([...this.#watches.values()].map((watch) => watch.stop()));
    this.#watches.clear();
  }
}
