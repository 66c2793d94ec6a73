import type { Redis } from 'ioredis';

// Claims in one Redis hash: field = claim id, value = its amounts then its expiry (ms), space
// separated ("cpu mem expiresAt" for a budget, "1 expiresAt" for a large-task slot). Claims
// past their expiry (a crashed dispatcher stopped renewing them) are dropped on the next call.
// ARGV: now, claim id ('' = none), expiresAt, mode ('' = only sum, 'check', 'hold'), n, the n
// amounts, the n limits. Returns the live claims' sums other than this id, then 1 when the
// claim is held (0 when a 'check' found no room).
const CLAIM = `
local now = tonumber(ARGV[1])
local n = tonumber(ARGV[5])
local used = {}
for d = 1, n do used[d] = 0 end
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local parts = {}
  for x in string.gmatch(fields[i + 1], '%d+') do parts[#parts + 1] = tonumber(x) end
  if parts[#parts] < now then
    redis.call('HDEL', KEYS[1], fields[i])
  elseif fields[i] ~= ARGV[2] then
    for d = 1, n do used[d] = used[d] + (parts[d] or 0) end
  end
end
local mode = ARGV[4]
local held = 1
if mode ~= '' then
  local value = ''
  for d = 1, n do
    if mode == 'check' and used[d] + tonumber(ARGV[5 + d]) > tonumber(ARGV[5 + n + d]) then
      held = 0
    end
    value = value .. ARGV[5 + d] .. ' '
  end
  if held == 1 then redis.call('HSET', KEYS[1], ARGV[2], value .. ARGV[3]) end
end
used[n + 1] = held
return used
`;

// Pushes a held claim's expiry forward; a claim that is gone (lapsed, released) stays gone.
const RENEW = `
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return 0 end
local amounts = string.match(v, '^(.*) %d+$')
redis.call('HSET', KEYS[1], ARGV[1], amounts .. ' ' .. ARGV[2])
return 1
`;

export interface LeasedClaimsOptions {
  readonly redis: Redis;
  /** A claim lapses this long after it was made or last renewed. */
  readonly leaseMs: number;
}

/**
 * Atomic, crash-safe claims on a limited amount, shared by every dispatcher through Redis:
 * a claim is checked and recorded in one script, is idempotent per claim id (a re-attached
 * run keeps its claim), and lapses unless renewed, so a dispatcher that died holding one
 * frees it after the lease. The local budget (cpu, memory) and the large-task slots (a count)
 * are both such claims.
 */
export class LeasedClaims {
  readonly #redis: Redis;
  readonly #leaseMs: number;

  constructor(options: LeasedClaimsOptions) {
    this.#redis = options.redis;
    this.#leaseMs = options.leaseMs;
  }

  async #call(
    key: string,
    id: string,
    mode: '' | 'check' | 'hold',
    amounts: readonly number[],
    limits: readonly number[],
  ): Promise<{ used: number[]; held: boolean }> {
    const now = Date.now();
    const reply = (await this.#redis.eval(
      CLAIM,
      1,
      key,
      String(now),
      id,
      String(now + this.#leaseMs),
      mode,
      String(amounts.length),
      ...amounts.map(String),
      ...limits.map(String),
    )) as number[];
    return { used: reply.slice(0, amounts.length), held: reply[amounts.length] === 1 };
  }

  /** The sums of the live claims, one per dimension (`dimensions` of them). */
  async used(key: string, dimensions: number): Promise<number[]> {
    const zeros = Array.from({ length: dimensions }, () => 0);
    return (await this.#call(key, '', '', zeros, zeros)).used;
  }

  /**
   * Records the claim when it fits the limits beside the other live claims (its own earlier
   * claim not counted). Returns the others' sums and whether it is held.
   */
  claim(
    key: string,
    id: string,
    amounts: readonly number[],
    limits: readonly number[],
  ): Promise<{ used: number[]; held: boolean }> {
    return this.#call(key, id, 'check', amounts, limits);
  }

  /** Records the claim whatever the others hold: for what runs already (a re-attached run). */
  async hold(key: string, id: string, amounts: readonly number[]): Promise<void> {
    await this.#call(key, id, 'hold', amounts, amounts);
  }

  async renew(key: string, id: string): Promise<void> {
    await this.#redis.eval(RENEW, 1, key, id, String(Date.now() + this.#leaseMs));
  }

  async release(key: string, id: string): Promise<void> {
    await this.#redis.hdel(key, id);
  }
}
