-- Cancel every run of ARGV[4..] at ARGV[1]: a queued or sleeping run ends cancelled at once
-- (error ARGV[2], ARGV[3]); a running one gets its cancel recorded for its worker to act on
-- (see heartbeat). Answers, per run found, {id, name, state before, 1/0 changed}.
local now = ARGV[1]
local answers = {}
for i = 4, #ARGV do
  local id = ARGV[i]
  local run = fields(id, {'name', 'state', 'queue', 'priority', 'cancel_req'})
  if run.state ~= nil then
    local jk = job_key(id)
    local changed = 1
    if run.state == 'queued' or run.state == 'sleeping' then
      due_remove(id, run.queue, run.priority, run.name)
      redis.call('ZREM', key('queued', run.queue), pad(id))
      redis.call('HSET', jk, 'state', 'cancelled', 'finished', now, 'updated', now,
        'err_code', ARGV[2], 'err_msg', ARGV[3])
      restate(id, run.queue, run.state, 'cancelled')
      finished_add(id, 'cancelled', run.queue, now)
    elseif run.state == 'running' then
      if run.cancel_req == nil then redis.call('HSET', jk, 'cancel_req', now) end
      redis.call('HSET', jk, 'updated', now)
    else
      changed = 0
    end
    table.insert(answers, {id, run.name, run.state, changed})
  end
end
return answers
