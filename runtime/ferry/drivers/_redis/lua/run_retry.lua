-- Put every dead or cancelled run of ARGV[2..] back to queued at ARGV[1] with fresh
-- attempts, and wake workers. Answers, per run found, {id, name, state before, 1/0 changed}.
local now = ARGV[1]
local answers = {}
for i = 2, #ARGV do
  local id = ARGV[i]
  local run = fields(id, {'name', 'state', 'queue', 'priority', 'parent'})
  if run.state ~= nil then
    local changed = run.state == 'dead' or run.state == 'cancelled'
    if changed then
      local jk = job_key(id)
      redis.call('ZREM', key('fin', run.state, run.queue), pad(id))
      redis.call('HSET', jk, 'state', 'queued', 'attempts', '0', 'run_at', now, 'updated', now)
      redis.call('HDEL', jk, 'finished', 'cancel_req')
      restate(id, run.queue, run.state, 'queued')
      enqueued(id, run.queue, run.priority, run.name, now, now)
      state_moved(id, run.parent, run.state, 'queued', now, {})  -- pending in its parent again
      wake(run.queue)
    end
    table.insert(answers, {id, run.name, run.state, changed and 1 or 0})
  end
end
return answers
