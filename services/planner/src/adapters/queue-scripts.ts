// Lua scripts on BullMQ 6's key layout (`<prefix>:<queue>:prioritized` etc., job hash
// `<prefix>:<queue>:<id>` with `data` and `priority`). BullMQ's own `changePriority`
// re-queues a job behind every job of its new priority (it takes a new FIFO counter);
// these keep the job's original counter, so equal priority still means "created first
// runs first" after updates and aging, and they touch a job only while it waits.
// The integration tests pin this layout with a real BullMQ Worker.
// Sent by SHA1 (`RedisScript`): their text was ~1.7 KB of the bytes written per table state.
import { RedisScript } from '@icepack/runtime';
// BullMQ's own add script, as its release ships it (its includes resolved): the planner's adds
// run it, so a job it adds is the job `Queue.add` would add. The CommonJS build: the ESM one
// sits in a package Node reads as CommonJS.
import { addPrioritizedJob } from 'bullmq/dist/cjs/scripts/addPrioritizedJob-9.js';

/**
 * Lua: `inspect(base, first, out, last)` appends, for each job id in ARGV[first..last] (`last`
 * omitted: to the end), where it is:
 * prioritized | delayed | wait | paused | active | completed | failed | unknown | missing,
 * followed by its `data` (or ''). `base` is the queue key prefix (`icepack:<queue>:`).
 * An id without a job hash is missing: the hash is what BullMQ itself tests (an add under an
 * id whose hash exists is a duplicate; removing a job removes its hash with its list entries).
 * Most of a table's ids (3 types × MAX_TASK_GROUPS) have no job, so that test comes first:
 * one command for such an id, not eight (issue 17, the planner benchmark).
 * The one home of this read: {@link INSPECT_JOBS} and the planner's read of a table
 * (`table-reads.ts`) both run it.
 */
export const INSPECT_JOBS_LUA = `
local function inspect(base, first, out, last)
  for i = first, last or #ARGV do
    local id = ARGV[i]
    local state = 'missing'
    local data = ''
    if redis.call('EXISTS', base .. id) == 1 then
      if redis.call('ZSCORE', base .. 'prioritized', id) then state = 'prioritized'
      elseif redis.call('ZSCORE', base .. 'delayed', id) then state = 'delayed'
      elseif redis.call('LPOS', base .. 'active', id) then state = 'active'
      elseif redis.call('LPOS', base .. 'wait', id) then state = 'wait'
      elseif redis.call('LPOS', base .. 'paused', id) then state = 'paused'
      elseif redis.call('ZSCORE', base .. 'completed', id) then state = 'completed'
      elseif redis.call('ZSCORE', base .. 'failed', id) then state = 'failed'
      else state = 'unknown' end
      data = redis.call('HGET', base .. id, 'data') or ''
    end
    out[#out + 1] = state
    out[#out + 1] = data
  end
end
`;

/**
 * For each job id, where it is and its data ({@link INSPECT_JOBS_LUA}).
 * KEYS: none. ARGV[1] = queue key prefix (`icepack:<queue>:`), ARGV[2..] = job ids.
 */
export const INSPECT_JOBS = new RedisScript(`${INSPECT_JOBS_LUA}
local out = {}
inspect(ARGV[1], 2, out)
return out
`);

/**
 * Sets waiting jobs' priority (keeping each one's FIFO counter) and, optionally, their data:
 * the updates made in one turn in one command (`TaskQueue.update`). Answers per job: 1 when
 * updated, 0 when the job is not waiting (running, finished or gone), -1 when its expected data
 * is given and the data is no longer that (someone updated it meanwhile).
 * KEYS: none (each job's keys are in ARGV, as {@link INSPECT_JOBS} takes its queue's).
 * ARGV[1] the number of jobs, then per job: its prioritized key, delayed key, job hash key,
 * job id, priority, new data or '', expected data or ''.
 */
export const UPDATE_WAITING_JOBS = new RedisScript(`
local out = {}
for j = 0, tonumber(ARGV[1]) - 1 do
  local a = 2 + j * 7
  local prioritized, delayed, hash, id = ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
  local priority = tonumber(ARGV[a + 4])
  local code = 1
  if ARGV[a + 6] ~= '' and redis.call('HGET', hash, 'data') ~= ARGV[a + 6] then
    code = -1
  else
    local score = redis.call('ZSCORE', prioritized, id)
    if score then
      local counter = tonumber(score) % 0x100000000
      redis.call('ZADD', prioritized, priority * 0x100000000 + counter, id)
    elseif not redis.call('ZSCORE', delayed, id) then
      code = 0
    end
  end
  if code == 1 then
    redis.call('HSET', hash, 'priority', priority)
    if ARGV[a + 5] ~= '' then redis.call('HSET', hash, 'data', ARGV[a + 5]) end
  end
  out[#out + 1] = code
end
return out
`);

/**
 * The `createdAt` (ms) of the catalog's oldest waiting task, read from the planner's
 * index of created tasks (a zset: job id → the task's `createdAt`, written by
 * `TaskQueue.create`): the index is walked from its oldest entry to the first job that
 * waits — prioritized, delayed (quota or retry backoff), wait or paused. A job that runs
 * is looked past and kept (it may be put back to wait); an entry whose job is gone
 * (finished and removed, or removed as superseded) is dropped, unless younger than the
 * grace: `create` writes the entry just before BullMQ adds the job. Each gone entry is
 * dropped once, so a measurement costs a few commands, not a walk of the queue.
 * Returns the score as a string, -1 when no task waits, -2 when `budget` entries were
 * looked at without an answer (the next measurement goes on).
 * KEYS[1] index, KEYS[2] prioritized, KEYS[3] delayed, KEYS[4] wait, KEYS[5] paused.
 * ARGV[1] queue key prefix (`icepack:<queue>:`), ARGV[2] now (ms), ARGV[3] grace (ms),
 * ARGV[4] budget (entries).
 */
export const OLDEST_WAITING = new RedisScript(`
local base = ARGV[1]
local now = tonumber(ARGV[2])
local grace = tonumber(ARGV[3])
local budget = tonumber(ARGV[4])
local offset = 0
while budget > 0 do
  local entries = redis.call('ZRANGE', KEYS[1], offset, offset + math.min(budget, 50) - 1, 'WITHSCORES')
  if #entries == 0 then return -1 end
  for i = 1, #entries, 2 do
    local id, created = entries[i], entries[i + 1]
    budget = budget - 1
    if redis.call('ZSCORE', KEYS[2], id) or redis.call('ZSCORE', KEYS[3], id)
      or redis.call('LPOS', KEYS[4], id) or redis.call('LPOS', KEYS[5], id) then
      return created
    elseif redis.call('EXISTS', base .. id) == 0 and now - tonumber(created) > grace then
      redis.call('ZREM', KEYS[1], id)
    else
      offset = offset + 1
    end
  end
end
return -2
`);

/**
 * Adds prioritized jobs with custom ids, each exactly as BullMQ's `Queue.add` does (its own
 * `addPrioritizedJob` script, run once per job: a job whose id exists is a duplicate and left
 * as it is), each after writing its entry in the planner's created index (as `TaskQueue.create`
 * did before the add, now in the same script, so no crash falls between them). The adds made
 * in one turn go in one command (issue 17 point 6: per job, `Queue.add` was a script call and
 * the index a `ZADD` of its own, each a command with its client work, promise and reply).
 * KEYS: none (each job's keys are built from its queue's key prefix, as `Queue.keys` names them).
 * ARGV[1] the number of jobs, then per job: the queue key prefix (`icepack:<queue>:`), the
 * created index key, the task's `createdAt` (ms), the job id, BullMQ's packed arguments (the id
 * among them), the job data, the packed options. Answers each job's id (BullMQ's answer; a
 * duplicate answers its id too).
 */
export const ADD_PRIORITIZED_JOBS = new RedisScript(`
local function addPrioritizedJob(KEYS, ARGV)
${addPrioritizedJob.content}
end
local out = {}
for j = 0, tonumber(ARGV[1]) - 1 do
  local a = 2 + j * 7
  local base = ARGV[a]
  redis.call('ZADD', ARGV[a + 1], ARGV[a + 2], ARGV[a + 3])
  out[#out + 1] = addPrioritizedJob({ base .. 'marker', base .. 'meta', base .. 'id',
    base .. 'prioritized', base .. 'delayed', base .. 'completed', base .. 'active',
    base .. 'events', base .. 'pc' }, { ARGV[a + 4], ARGV[a + 5], ARGV[a + 6] })
end
return out
`);
