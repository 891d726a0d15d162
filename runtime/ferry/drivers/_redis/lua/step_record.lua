-- Record step ARGV[4] (document ARGV[5], of kind ARGV[6]) of run ARGV[1] if worker ARGV[2]
-- still holds it at ARGV[3]; answers 1 when it holds it (a step already recorded is kept:
-- replaying a record is not an error — but a `sleep` record gives way to a `run` record of
-- its name, a step.wait ending with its outcomes), 0 when the run is no longer that
-- worker's. A step is stored as "<n>|<document>", n counting the run's steps: the order
-- they were recorded in.
local id, worker, now, name, document, kind = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
if not holds(fields(id, {'state', 'locked_by', 'lease'}), worker, now) then return 0 end
local stored = redis.call('HGET', steps_key(id), name)
if not stored then
  local n = redis.call('HLEN', steps_key(id)) + 1
  redis.call('HSET', steps_key(id), name, n .. '|' .. document)
elseif kind == 'run' then
  local n, old = string.match(stored, '^(%d+)|(.*)$')
  if cjson.decode(old).kind == 'sleep' then
    redis.call('HSET', steps_key(id), name, n .. '|' .. document)
  end
end
return 1
