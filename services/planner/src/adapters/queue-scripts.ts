// Lua scripts on BullMQ 6's key layout (`<prefix>:<queue>:prioritized` etc., job hash
// `<prefix>:<queue>:<id>` with `data` and `priority`). BullMQ's own `changePriority`
// re-queues a job behind every job of its new priority (it takes a new FIFO counter);
// these keep the job's original counter, so equal priority still means "created first
// runs first" after updates and aging, and they touch a job only while it waits.
// The integration tests pin this layout with a real BullMQ Worker.

/**
 * For each job id, where it is: prioritized | delayed | wait | paused | active | completed
 * | failed | unknown | missing, followed by its `data` (or '').
 * KEYS: none. ARGV[1] = queue key prefix (`icepack:<queue>:`), ARGV[2..] = job ids.
 */
export const INSPECT_JOBS = `
local base = ARGV[1]
local out = {}
for i = 2, #ARGV do
  local id = ARGV[i]
  local state = 'missing'
  if redis.call('ZSCORE', base .. 'prioritized', id) then state = 'prioritized'
  elseif redis.call('ZSCORE', base .. 'delayed', id) then state = 'delayed'
  elseif redis.call('LPOS', base .. 'active', id) then state = 'active'
  elseif redis.call('LPOS', base .. 'wait', id) then state = 'wait'
  elseif redis.call('LPOS', base .. 'paused', id) then state = 'paused'
  elseif redis.call('ZSCORE', base .. 'completed', id) then state = 'completed'
  elseif redis.call('ZSCORE', base .. 'failed', id) then state = 'failed'
  elseif redis.call('EXISTS', base .. id) == 1 then state = 'unknown' end
  local data = ''
  if state ~= 'missing' then data = redis.call('HGET', base .. id, 'data') or '' end
  out[#out + 1] = state
  out[#out + 1] = data
end
return out
`;

/**
 * Sets a waiting job's priority (keeping its FIFO counter) and, optionally, its data.
 * Returns 1 when updated, 0 when the job is not waiting (running, finished or gone), -1
 * when ARGV[4] is given and the data is no longer that (someone updated it meanwhile).
 * KEYS[1] prioritized, KEYS[2] delayed, KEYS[3] job hash.
 * ARGV[1] job id, ARGV[2] priority, ARGV[3] new data or '', ARGV[4] expected data or ''.
 */
export const UPDATE_WAITING_JOB = `
local id = ARGV[1]
local priority = tonumber(ARGV[2])
if ARGV[4] ~= '' and redis.call('HGET', KEYS[3], 'data') ~= ARGV[4] then return -1 end
local score = redis.call('ZSCORE', KEYS[1], id)
if score then
  local counter = tonumber(score) % 0x100000000
  redis.call('ZADD', KEYS[1], priority * 0x100000000 + counter, id)
elseif not redis.call('ZSCORE', KEYS[2], id) then
  return 0
end
redis.call('HSET', KEYS[3], 'priority', priority)
if ARGV[3] ~= '' then redis.call('HSET', KEYS[3], 'data', ARGV[3]) end
return 1
`;
