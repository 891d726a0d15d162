-- Delete the runs ARGV[2..] still `moving` under drain ARGV[1], with their steps, index
-- entries and idempotency keys; answers the ids deleted (a run another drain took over,
-- or that is not moving, is left alone).
local removed = {}
for i = 2, #ARGV do
  local id = ARGV[i]
  local run = fields(id, {'state', 'locked_by', 'queue', 'moving_to'})
  if run.state == 'moving' and run.locked_by == ARGV[1] then
    redis.call('ZREM', key('moving', run.moving_to), id)
    forget(id, 'moving', run.queue)
    table.insert(removed, id)
  end
end
return removed
