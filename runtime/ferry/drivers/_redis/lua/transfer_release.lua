-- Put the runs ARGV[3..] still `moving` under drain ARGV[1] back in the state they had, at
-- ARGV[2] (now): queued runs claimable again (found by the workers' next poll), dead ones
-- dead as they were. Answers the ids released.
local released = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local run = fields(id, {'state', 'locked_by', 'queue', 'moving_to', 'moving_from',
    'priority', 'name', 'run_at', 'finished'})
  if run.state == 'moving' and run.locked_by == ARGV[1] then
    local back = run.moving_from or 'queued'
    redis.call('ZREM', key('moving', run.moving_to), id)
    redis.call('HSET', job_key(id), 'state', back, 'updated', ARGV[2])
    redis.call('HDEL', job_key(id), 'moving_from', 'moving_to', 'locked_by')
    restate(id, run.queue, 'moving', back)
    if back == 'queued' then
      enqueued(id, run.queue, run.priority, run.name, run.run_at, ARGV[2])
    else
      finished_add(id, back, run.queue, run.finished)
    end
    table.insert(released, id)
  end
end
return released
