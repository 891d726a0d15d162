-- Mark run p.id as awaiting its children (step.wait, just before it parks) if worker
-- p.worker_id holds it at p.now; a row when it did. The park that follows ends at once
-- when no child is pending, and the last child to end wakes it (ferry.drivers.fan_in;
-- `settle` and parent_counted).
local p = params()
local id = int(p.id)
if not holds(fields(id, {'state', 'locked_by', 'lease'}), p.worker_id, p.now) then return {} end
redis.call('HSET', job_key(id), 'await', '1')
return rows({{id = p.id}})
