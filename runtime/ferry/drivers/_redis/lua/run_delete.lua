-- Delete every run of ARGV[2..] that no worker or drain holds, with its steps, its
-- idempotency key (free again) and its index entries; running and moving runs stay. A
-- child deleted before its end counts as its end for its parent (ferry.drivers.fan_in),
-- which is due at ARGV[1] when it waits for its children and that was the last.
-- Answers, per run found, {id, name, state, 1/0 deleted}.
local now = ARGV[1]
local answers = {}
for i = 2, #ARGV do
  local id = ARGV[i]
  local run = fields(id, {'name', 'state', 'queue', 'priority', 'parent'})
  if run.state ~= nil then
    local deletable = run.state ~= 'running' and run.state ~= 'moving'
    if deletable then
      if run.state == 'queued' or run.state == 'sleeping' then
        due_remove(id, run.queue, run.priority, run.name)
        redis.call('ZREM', key('queued', run.queue), pad(id))
      else
        redis.call('ZREM', key('fin', run.state, run.queue), pad(id))
      end
      forget(id, run.state, run.queue)
      state_moved(id, run.parent, run.state, nil, now, {})
    end
    table.insert(answers, {id, run.name, run.state, deletable and 1 or 0})
  end
end
return answers
