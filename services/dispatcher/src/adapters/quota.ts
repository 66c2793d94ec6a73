import type { Redis } from 'ioredis';
import { parseCpuMillicores, parseMemoryBytes, type Binding, type QuotaUse } from '@icepack/types';
import type { QuotaRoom } from '../domain/sizing.ts';

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

// Claims in one hash per catalog: field = run id, value = "cpu mem expiresAt". Expired
// claims (a crashed dispatcher) are dropped on the next call.
const ACQUIRE = `
local now = tonumber(ARGV[1])
local usedCpu, usedMem = 0, 0
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local cpu, mem, exp = string.match(fields[i + 1], '(%d+) (%d+) (%d+)')
  if tonumber(exp) < now then
    redis.call('HDEL', KEYS[1], fields[i])
  elseif fields[i] ~= ARGV[2] then
    usedCpu = usedCpu + tonumber(cpu)
    usedMem = usedMem + tonumber(mem)
  end
end
if ARGV[3] == '' then return {usedCpu, usedMem, 1} end
local cpu, mem = tonumber(ARGV[3]), tonumber(ARGV[4])
if usedCpu + cpu > tonumber(ARGV[6]) or usedMem + mem > tonumber(ARGV[7]) then
  return {usedCpu, usedMem, 0}
end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3] .. ' ' .. ARGV[4] .. ' ' .. ARGV[5])
return {usedCpu, usedMem, 1}
`;

// Pushes a held claim's expiry forward; a claim that is gone stays gone.
const RENEW = `
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return 0 end
local cpu, mem = string.match(v, '(%d+) (%d+) ')
redis.call('HSET', KEYS[1], ARGV[1], cpu .. ' ' .. mem .. ' ' .. ARGV[2])
return 1
`;

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
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #leaseMs: number;

  constructor(options: LocalBudgetOptions) {
    this.#redis = options.redis;
    this.#prefix = options.prefix ?? 'icepack';
    this.#leaseMs = options.leaseMs ?? 10 * 60_000;
  }

  #key(binding: Binding): string {
    return `${this.#prefix}:budget:${binding.catalog}`;
  }

  async #call(
    binding: Binding,
    runId: string,
    request?: QuotaRequest,
  ): Promise<[number, number, number]> {
    const now = Date.now();
    return (await this.#redis.eval(
      ACQUIRE,
      1,
      this.#key(binding),
      String(now),
      runId,
      request === undefined ? '' : String(request.cpuMillicores),
      request === undefined ? '' : String(request.memoryBytes),
      String(now + this.#leaseMs),
      String(parseCpuMillicores(binding.cpu)),
      String(parseMemoryBytes(binding.memory)),
    )) as [number, number, number];
  }

  async room(binding: Binding): Promise<QuotaRoom> {
    const [cpu, memory] = await this.#call(binding, '');
    return {
      cpuMillicores: parseCpuMillicores(binding.cpu) - cpu,
      memoryBytes: parseMemoryBytes(binding.memory) - memory,
    };
  }

  async usage(binding: Binding): Promise<QuotaUsage> {
    const [cpu, memory] = await this.#call(binding, '');
    return {
      source: 'budget',
      cpu: { usedMillicores: cpu, hardMillicores: parseCpuMillicores(binding.cpu) },
      memory: { usedBytes: memory, hardBytes: parseMemoryBytes(binding.memory) },
    };
  }

  async acquire(binding: Binding, runId: string, request: QuotaRequest): Promise<boolean> {
    const [, , ok] = await this.#call(binding, runId, request);
    return ok === 1;
  }

  async release(binding: Binding, runId: string): Promise<void> {
    await this.#redis.hdel(this.#key(binding), runId);
  }

  async renew(binding: Binding, runId: string): Promise<void> {
    await this.#redis.eval(RENEW, 1, this.#key(binding), runId, String(Date.now() + this.#leaseMs));
  }
}
