-- Cancel run ARGV[1] at ARGV[2]: a queued or sleeping run ends cancelled at once (error
-- ARGV[3], ARGV[4]); a running one gets its cancel recorded for its worker to act on (see
-- heartbeat). Its descendants that have not ended are cancelled the same way (error
-- ARGV[3], ARGV[5]; ferry.drivers.fan_in), walking children:<id> down the tree; a run that
-- ends here counts in its parent and is told to result waiters. Answers the run's name,
-- its state before, and 1/0 changed; nil when missing.
local id, now = ARGV[1], ARGV[2]
local ended = {}

-- Cancel run `rid` if it has not ended; answers its state before.
local function cancel(rid, message)
  local run = fields(rid, {'name', 'state', 'queue', 'priority', 'cancel_req', 'parent'})
  local jk = job_key(rid)
  if run.state == 'queued' or run.state == 'sleeping' then
    due_remove(rid, run.queue, run.priority, run.name)
    redis.call('ZREM', key('queued', run.queue), pad(rid))
    redis.call('HSET', jk, 'state', 'cancelled', 'finished', now, 'updated', now,
      'err_code', ARGV[3], 'err_msg', message)
    redis.call('HDEL', jk, 'await')
    restate(rid, run.queue, run.state, 'cancelled')
    finished_add(rid, 'cancelled', run.queue, now)
    state_moved(rid, run.parent, run.state, 'cancelled', now, ended)
  elseif run.state == 'running' then
    if run.cancel_req == nil then redis.call('HSET', jk, 'cancel_req', now) end
    redis.call('HSET', jk, 'updated', now)
  end
  return run
end

local run = fields(id, {'name', 'state'})
if run.state == nil then return nil end
if run.state ~= 'queued' and run.state ~= 'sleeping' and run.state ~= 'running' then
  return {run.name, run.state, 0}
end
cancel(id, ARGV[4])
local pending = {id}
while #pending > 0 do
  local parent = table.remove(pending)
  for _, child in ipairs(redis.call('ZRANGE', key('children', parent), 0, -1)) do
    cancel(child, ARGV[5])
    table.insert(pending, child)
  end
end
tell_ended(ended)
return {run.name, run.state, 1}
