-- An operator's retry of the runs of p.ids, in one script: each dead or cancelled one is
-- put back to queued at p.now with fresh attempts (pending in its parent again), and
-- workers are woken. A row per run found (lib.lua's acted).
local p = params()
local now = int(p.now)
return acted(p.ids, {'name', 'state', 'queue', 'priority', 'parent'}, function(id, run)
  if run.state ~= 'dead' and run.state ~= 'cancelled' then return false end
  local jk = job_key(id)
  redis.call('ZREM', key('fin', run.state, run.queue), pad(id))
  redis.call('HSET', jk, 'state', 'queued', 'attempts', '0', 'run_at', now, 'updated', now)
  redis.call('HDEL', jk, 'finished', 'cancel_req')
  restate(id, run.queue, run.state, 'queued')
  enqueued(id, run.queue, run.priority, run.name, now, now)
  state_moved(id, run.parent, run.state, 'queued', now, {})
  wake(run.queue)
  return true
end)
