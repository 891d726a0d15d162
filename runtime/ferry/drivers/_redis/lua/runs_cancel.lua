-- An operator's cancel of the runs of p.ids at p.now, in one script: a queued or sleeping
-- run ends cancelled at once (p.error_code, p.error_message); a running one gets its cancel
-- recorded for its worker to act on (see heartbeat). The descendants of each run it
-- changed that have not ended are cancelled the same way (p.parent_code,
-- p.parent_message; ferry.drivers.fan_in), walking children:<id> down the tree; a run that
-- ends here counts in its parent and is told to result waiters. A row per run found
-- (lib.lua's acted).
local p = params()
local now = int(p.now)
local ended = {}

-- Cancel run `rid` if it has not ended, with error `code`, `message`; answers whether it
-- had not.
local function cancel(rid, code, message)
  local run = fields(rid, {'state', 'queue', 'priority', 'name', 'cancel_req', 'parent'})
  local jk = job_key(rid)
  if run.state == 'queued' or run.state == 'sleeping' then
    due_remove(rid, run.queue, run.priority, run.name)
    redis.call('ZREM', key('queued', run.queue), pad(rid))
    redis.call('HSET', jk, 'state', 'cancelled', 'finished', now, 'updated', now,
      'err_code', code, 'err_msg', message)
    redis.call('HDEL', jk, 'await')
    restate(rid, run.queue, run.state, 'cancelled')
    finished_add(rid, 'cancelled', run.queue, now)
    state_moved(rid, run.parent, run.state, 'cancelled', now, ended)
  elseif run.state == 'running' then
    if run.cancel_req == nil then redis.call('HSET', jk, 'cancel_req', now) end
    redis.call('HSET', jk, 'updated', now)
  else
    return false
  end
  return true
end

local answer = acted(p.ids, {'name', 'state'}, function(id)
  if not cancel(id, p.error_code, p.error_message) then return false end
  local pending = {id}
  while #pending > 0 do
    local parent = table.remove(pending)
    for _, child in ipairs(redis.call('ZRANGE', key('children', parent), 0, -1)) do
      cancel(child, p.parent_code, p.parent_message)
      table.insert(pending, child)
    end
  end
  return true
end)
tell_ended(ended)
return answer
