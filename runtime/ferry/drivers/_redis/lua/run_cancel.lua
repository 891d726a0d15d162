-- Cancel every run of ARGV[5..] at ARGV[1]: a queued or sleeping run ends cancelled at once
-- (error ARGV[2], ARGV[3]); a running one gets its cancel recorded for its worker to act on
-- (see heartbeat). The descendants of each run it changed that have not ended are
-- cancelled the same way (error ARGV[2], ARGV[4]; ferry.drivers.fan_in), walking
-- children:<id> down the tree; a run that ends here counts in its parent and is told to
-- result waiters. Answers, per run found, {id, name, state before, 1/0 changed}.
local now = ARGV[1]
local ended, answers = {}, {}

-- Cancel run `rid` if it has not ended; answers whether it had not.
local function cancel(rid, message)
  local run = fields(rid, {'state', 'queue', 'priority', 'name', 'cancel_req', 'parent'})
  local jk = job_key(rid)
  if run.state == 'queued' or run.state == 'sleeping' then
    due_remove(rid, run.queue, run.priority, run.name)
    redis.call('ZREM', key('queued', run.queue), pad(rid))
    redis.call('HSET', jk, 'state', 'cancelled', 'finished', now, 'updated', now,
      'err_code', ARGV[2], 'err_msg', message)
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

for i = 5, #ARGV do
  local id = ARGV[i]
  local run = fields(id, {'name', 'state'})
  if run.state ~= nil then
    local changed = cancel(id, ARGV[3])
    if changed then
      local pending = {id}
      while #pending > 0 do
        local parent = table.remove(pending)
        for _, child in ipairs(redis.call('ZRANGE', key('children', parent), 0, -1)) do
          cancel(child, ARGV[4])
          table.insert(pending, child)
        end
      end
    end
    table.insert(answers, {id, run.name, run.state, changed and 1 or 0})
  end
end
tell_ended(ended)
return answers
