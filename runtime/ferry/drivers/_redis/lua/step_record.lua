-- Record step p.name of run p.job_id if worker p.worker_id still holds it at p.now; a row
-- when it holds it (a step already recorded is kept: replaying a record is not an error —
-- but a `sleep` record gives way to a `run` record of its name, a step.wait ending with
-- its outcomes). Stored as lib.lua's step_document says.
local p = params()
local id = int(p.job_id)
if not holds(fields(id, {'state', 'locked_by', 'lease'}), p.worker_id, p.now) then return {} end
local steps = steps_key(id)
local stored = redis.call('HGET', steps, p.name)
if not stored then
  redis.call('HSET', steps, p.name, redis.call('HLEN', steps) + 1 .. '|' .. step_document(p))
elseif p.kind == 'run' and string.find(stored, '^%d+|{"kind":"sleep",') then
  redis.call('HSET', steps, p.name, string.match(stored, '^%d+') .. '|' .. step_document(p))
end
return rows({{held = true}})
