-- Put dead or cancelled run ARGV[1] back to queued at ARGV[2] with fresh attempts, and
-- wake workers. Answers the run's name, its state before, and 1/0 changed; nil when missing.
local id, now = ARGV[1], ARGV[2]
local run = fields(id, {'name', 'state', 'queue', 'priority', 'parent'})
if run.state == nil then return nil end
if run.state ~= 'dead' and run.state ~= 'cancelled' then return {run.name, run.state, 0} end
local jk = job_key(id)
redis.call('ZREM', key('fin', run.state, run.queue), pad(id))
redis.call('HSET', jk, 'state', 'queued', 'attempts', '0', 'run_at', now, 'updated', now)
redis.call('HDEL', jk, 'finished', 'cancel_req')
restate(id, run.queue, run.state, 'queued')
enqueued(id, run.queue, run.priority, run.name, now, now)
state_moved(id, run.parent, run.state, 'queued', now, {})  -- pending in its parent again
wake(run.queue)
return {run.name, run.state, 1}
