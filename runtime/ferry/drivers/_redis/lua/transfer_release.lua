-- Put runs p.ids still `moving` under drain p.drain_id back in the state they had, at
-- p.now: queued runs claimable again (found by the workers' next poll), dead ones dead as
-- they were. Answers the runs released.
local p = params()
local now = int(p.now)
local released = {}
for _, id in ipairs(p.ids) do
  id = int(id)
  local run = fields(id, {'state', 'locked_by', 'queue', 'moving_to', 'moving_from',
    'priority', 'name', 'run_at', 'finished'})
  if run.state == 'moving' and run.locked_by == p.drain_id then
    local back = run.moving_from or 'queued'
    redis.call('ZREM', key('moving', run.moving_to), id)
    redis.call('HSET', job_key(id), 'state', back, 'updated', now)
    redis.call('HDEL', job_key(id), 'moving_from', 'moving_to', 'locked_by')
    restate(id, run.queue, 'moving', back)
    if back == 'queued' then
      enqueued(id, run.queue, run.priority, run.name, run.run_at, now)
    else
      finished_add(id, back, run.queue, run.finished)
    end
    released[#released + 1] = {id = id, state = back, run_at_ms = tonumber(run.run_at)}
  end
end
return rows(released)
