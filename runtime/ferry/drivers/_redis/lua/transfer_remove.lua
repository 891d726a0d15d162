-- Delete runs p.ids still `moving` under drain p.drain_id, with their steps, index entries
-- and idempotency keys; answers the runs deleted (a run another drain took over, or that
-- is not moving, is left alone).
local p = params()
local removed = {}
for _, id in ipairs(p.ids) do
  id = int(id)
  local run = fields(id, {'state', 'locked_by', 'queue', 'moving_to'})
  if run.state == 'moving' and run.locked_by == p.drain_id then
    redis.call('ZREM', key('moving', run.moving_to), id)
    forget(id, 'moving', run.queue)
    removed[#removed + 1] = {id = id}
  end
end
return rows(removed)
