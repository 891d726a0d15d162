-- Mark run ARGV[1] as awaiting its children (step.wait, just before it parks) if worker
-- ARGV[2] holds it at ARGV[3]; answers 1 when it did, 0 when the run is no longer that
-- worker's. The park that follows ends at once when no child is pending, and the last
-- child to end wakes it (ferry.drivers.fan_in; `settle` and parent_counted).
local id, worker, now = ARGV[1], ARGV[2], ARGV[3]
if not holds(fields(id, {'state', 'locked_by', 'lease'}), worker, now) then return 0 end
redis.call('HSET', job_key(id), 'await', '1')
return 1
