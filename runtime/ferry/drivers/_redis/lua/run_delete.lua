-- Delete every run of ARGV[1..] that no worker or drain holds, with its steps, its
-- idempotency key (free again) and its index entries; running and moving runs stay.
-- Answers, per run found, {id, name, state, 1/0 deleted}.
local answers = {}
for _, id in ipairs(ARGV) do
  local run = fields(id, {'name', 'state', 'queue', 'priority'})
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
    end
    table.insert(answers, {id, run.name, run.state, deletable and 1 or 0})
  end
end
return answers
