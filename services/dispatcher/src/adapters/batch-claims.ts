// Lua scripts on BullMQ 6's key layout (as services/planner/src/adapters/queue-scripts.ts):
// how a worker that took a small task (the leader) finds and holds further waiting tasks of
// its queue for one batched run (ADR 0027, "Worker wiring"). BullMQ's `Worker.getNextJob`
// cannot serve: it takes the next job, not a chosen one, and it refuses any job once the
// queue's global concurrency is reached — which the leader alone may reach.
import type { Redis } from 'ioredis';

/** A waiting job as the leader sees it: its id and data, and whether it started before. */
export interface WaitingJob {
  readonly id: string;
  readonly data: string;
  /**
   * The job's current attempt was recorded as started: its run (single or batched) may be
   * going on, so it is followed by its own processing, never put into a new batch.
   */
  readonly started: boolean;
}

/**
 * Up to ARGV[2] waiting jobs in the order a worker takes them: prioritized (priority, then
 * age), then the plain wait list (oldest first), then delayed jobs that wait only for the
 * catalog's quota (`icepack:quota-wait` = their current attempt; soonest due first) — those
 * cycle through `delayed` while a run holds the quota, and without them a batch would rarely
 * find a second task. A job delayed for a retry's back-off is not one of them. Each as id,
 * data, started ('1' | '0'). ARGV[1] = queue key prefix (`<prefix>:<queue>:`).
 */
const PEEK_WAITING = `
local base = ARGV[1]
local limit = tonumber(ARGV[2])
local ids = redis.call('ZRANGE', base .. 'prioritized', 0, limit - 1)
if #ids < limit then
  local waiting = redis.call('LRANGE', base .. 'wait', -(limit - #ids), -1)
  for i = #waiting, 1, -1 do ids[#ids + 1] = waiting[i] end
end
if #ids < limit then
  local delayed = redis.call('ZRANGE', base .. 'delayed', 0, 4 * limit - 1)
  for _, id in ipairs(delayed) do
    if #ids >= limit then break end
    local f = redis.call('HMGET', base .. id, 'icepack:attempt', 'icepack:quota-wait')
    if f[2] and f[2] == (f[1] or '1') then ids[#ids + 1] = id end
  end
end
local out = {}
for _, id in ipairs(ids) do
  local fields = redis.call('HMGET', base .. id, 'data', 'icepack:attempt', 'icepack:started')
  local started = '0'
  if fields[3] and fields[3] == (fields[2] or '1') then started = '1' end
  out[#out + 1] = id
  out[#out + 1] = fields[1] or ''
  out[#out + 1] = started
end
return out
`;

/**
 * Moves each job id that still waits (prioritized or wait, or delayed only for the quota as
 * PEEK_WAITING tells) and has not started its current attempt to the active list with a lock held by ARGV[2] for ARGV[3] ms, as BullMQ's
 * `moveToActive` does for the job it takes (lock, `processedOn`, `ats`, an `active` event).
 * Returns the ids it moved. A job taken, updated into a started one or removed meanwhile is
 * left alone. The queue's global concurrency is not checked: the held jobs are the leader's
 * one run, and they count as active while it runs.
 * ARGV[1] = queue key prefix, ARGV[2] = lock token, ARGV[3] = lock ms, ARGV[4] = now (ms),
 * ARGV[5..] = job ids.
 */
const CLAIM_WAITING = `
local base = ARGV[1]
local claimed = {}
for i = 5, #ARGV do
  local id = ARGV[i]
  local key = base .. id
  local fields = redis.call('HMGET', key, 'icepack:attempt', 'icepack:started', 'icepack:quota-wait')
  local attempt = fields[1] or '1'
  local started = fields[2] and fields[2] == attempt
  if not started then
    local prev = 'waiting'
    local moved = redis.call('ZREM', base .. 'prioritized', id)
    if moved == 0 then moved = redis.call('LREM', base .. 'wait', 1, id) end
    if moved == 0 and fields[3] and fields[3] == attempt then
      moved = redis.call('ZREM', base .. 'delayed', id)
      prev = 'delayed'
    end
    if moved > 0 then
      redis.call('LPUSH', base .. 'active', id)
      redis.call('SET', key .. ':lock', ARGV[2], 'PX', ARGV[3])
      redis.call('HSET', key, 'processedOn', ARGV[4])
      redis.call('HINCRBY', key, 'ats', 1)
      redis.call('HDEL', key, 'icepack:quota-wait')
      redis.call('XADD', base .. 'events', '*', 'event', 'active', 'jobId', id, 'prev', prev)
      claimed[#claimed + 1] = id
    end
  end
end
return claimed
`;

export class BatchClaims {
  readonly #redis: Redis;
  readonly #base: string;

  constructor(redis: Redis, prefix: string, queueName: string) {
    this.#redis = redis;
    this.#base = `${prefix}:${queueName}:`;
  }

  async peek(limit: number): Promise<WaitingJob[]> {
    const reply = (await this.#redis.eval(PEEK_WAITING, 0, this.#base, String(limit))) as string[];
    const jobs: WaitingJob[] = [];
    for (let i = 0; i + 2 < reply.length; i += 3)
      jobs.push({ id: reply[i]!, data: reply[i + 1]!, started: reply[i + 2] === '1' });
    return jobs;
  }

  /** Holds the jobs that still wait as active jobs locked by `token`; returns their ids. */
  async claim(ids: readonly string[], token: string, lockMs: number): Promise<string[]> {
    if (ids.length === 0) return [];
    return (await this.#redis.eval(
      CLAIM_WAITING,
      0,
      this.#base,
      token,
      String(lockMs),
      String(Date.now()),
      ...ids,
    )) as string[];
  }
}
