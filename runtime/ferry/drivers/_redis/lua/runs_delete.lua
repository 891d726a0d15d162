-- An operator's delete of the runs of p.ids, in one script: each one no worker or drain
-- holds goes, with its steps, its idempotency key (free again) and its index entries;
-- running and moving runs stay. A child deleted before its end counts as its end for its
-- parent (ferry.drivers.fan_in), which is due at p.now when it waits for its children and
-- that was the last. A row per run found (lib.lua's acted).
local p = params()
local now = int(p.now)
return acted(p.ids, {'name', 'state', 'queue', 'priority', 'parent'}, function(id, run)
  if run.state == 'running' or run.state == 'moving' then return false end
  if run.state == 'queued' or run.state == 'sleeping' then
    due_remove(id, run.queue, run.priority, run.name)
    redis.call('ZREM', key('queued', run.queue), pad(id))
  else
    redis.call('ZREM', key('fin', run.state, run.queue), pad(id))
  end
  forget(id, run.state, run.queue)
  state_moved(id, run.parent, run.state, nil, now, {})
  return true
end)
