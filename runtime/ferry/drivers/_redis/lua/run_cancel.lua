-- Cancel run ARGV[1] at ARGV[2]: a queued or sleeping run ends cancelled at once (error
-- ARGV[3], ARGV[4]); a running one gets its cancel recorded for its worker to act on (see
-- heartbeat). Answers the run's name, its state before, and 1/0 changed; nil when missing.
local id, now = ARGV[1], ARGV[2]
local run = fields(id, {'name', 'state', 'queue', 'priority', 'cancel_req'})
if run.state == nil then return nil end
local jk = job_key(id)
if run.state == 'queued' or run.state == 'sleeping' then
  due_remove(id, run.queue, run.priority, run.name)
  redis.call('ZREM', key('queued', run.queue), pad(id))
  redis.call('HSET', jk, 'state', 'cancelled', 'finished', now, 'updated', now,
    'err_code', ARGV[3], 'err_msg', ARGV[4])
  restate(id, run.queue, run.state, 'cancelled')
  finished_add(id, 'cancelled', run.queue, now)
  return {run.name, run.state, 1}
end
if run.state == 'running' then
  if run.cancel_req == nil then redis.call('HSET', jk, 'cancel_req', now) end
  redis.call('HSET', jk, 'updated', now)
  return {run.name, run.state, 1}
end
return {run.name, run.state, 0}
