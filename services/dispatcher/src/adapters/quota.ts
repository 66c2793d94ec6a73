import type { Redis } from 'ioredis';
import { parseCpuMillicores, parseMemoryBytes, type Binding, type QuotaUse } from '@icepack/types';
import type { QuotaRoom } from '../domain/sizing.ts';
import { LeasedClaims } from './leased-claims.ts';

/** A group's use as a gate sees it (the console's overview); `QuotaUse` without when and where. */
export type QuotaUsage = Omit<QuotaUse, 'group' | 'at'>;

export interface QuotaRequest {
  readonly cpuMillicores: number;
  readonly memoryBytes: number;
}

/**
 * The namespace quota as the dispatcher sees it: free room for sizing, and a claim on it for
 * a run. A claim is idempotent per run id (a re-attach keeps its claim).
 */
export interface QuotaGate {
  room(binding: Binding): Promise<QuotaRoom>;
  acquire(binding: Binding, runId: string, request: QuotaRequest): Promise<boolean>;
  release(binding: Binding, runId: string): Promise<void>;
  /**
   * Keeps a held claim alive while its run goes on (gates whose claims lapse). The worker
   * calls it every `RENEW_CLAIM_MS` until the run's end is known.
   */
  renew?(binding: Binding, runId: string): Promise<void>;
  /** How much of the binding's group is in use now (published for the console). */
  usage?(binding: Binding): Promise<QuotaUsage>;
  /** Prepares for a binding's tasks (starts a watch); called before its worker takes any. */
  open?(binding: Binding): Promise<void>;
  /** Stops what the gate keeps running (watches); called when its worker closes. */
  close?(): Promise<void>;
}

/** How often the worker renews a running task's claim: well inside the default lease. */
export const RENEW_CLAIM_MS = 60_000;

export interface LocalBudgetOptions {
  readonly redis: Redis;
  /** Key prefix. Default `icepack`. */
  readonly prefix?: string;
  /** A claim lapses this long after its last renewal. Default 10 min. */
  readonly leaseMs?: number;
}

/**
 * Local mode (no Kubernetes): the group's cpu/memory is a budget on this machine, shared by
 * all dispatcher processes through Redis. The worker renews a claim while its run goes on.
 */
export class LocalBudgetQuota implements QuotaGate {
  readonly #claims: LeasedClaims;
  readonly #prefix: string;

  constructor(options: LocalBudgetOptions) {
    this.#claims = new LeasedClaims({
      redis: options.redis,
      leaseMs: options.leaseMs ?? 10 * 60_000,
    });
    this.#prefix = options.prefix ?? 'icepack';
  }

  // Claims in one hash per catalog: "cpu mem expiresAt" per run id.
  #key(binding: Binding): string {
    return `${this.#prefix}:budget:${binding.catalog}`;
  }

  async #used(binding: Binding): Promise<[number, number]> {
    const [cpu = 0, memory = 0] = await this.#claims.used(this.#key(binding), 2);
    return [cpu, memory];
  }

  async room(binding: Binding): Promise<QuotaRoom> {
    const [cpu, memory] = await this.#used(binding);
    return {
      cpuMillicores: parseCpuMillicores(binding.cpu) - cpu,
      memoryBytes: parseMemoryBytes(binding.memory) - memory,
    };
  }

  async usage(binding: Binding): Promise<QuotaUsage> {
    const [cpu, memory] = await this.#used(binding);
    return {
      source: 'budget',
      cpu: { usedMillicores: cpu, hardMillicores: parseCpuMillicores(binding.cpu) },
      memory: { usedBytes: memory, hardBytes: parseMemoryBytes(binding.memory) },
    };
  }

  async acquire(binding: Binding, runId: string, request: QuotaRequest): Promise<boolean> {
    const { held } = await this.#claims.claim(
      this.#key(binding),
      runId,
      [request.cpuMillicores, request.memoryBytes],
      [parseCpuMillicores(binding.cpu), parseMemoryBytes(binding.memory)],
    );
    return held;
  }

  release(binding: Binding, runId: string): Promise<void> {
    return this.#claims.release(this.#key(binding), runId);
  }

  renew(binding: Binding, runId: string): Promise<void> {
    return this.#claims.renew(this.#key(binding), runId);
  }
}
