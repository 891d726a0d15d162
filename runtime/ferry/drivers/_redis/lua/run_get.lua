-- Run p.id with every column `jobs show` reports, as run_get.sql answers it: its hash's
-- fields as columns, how many children it enqueued, and its steps in the order they ran (a
-- JSON array; each step's result as JSON text). A step is stored as "<n>|<document>"
-- (step_record.lua; codec.step_document: kind, result, then the instants, compact): the
-- result's text is cut from the document, not decoded and encoded again, which would round
-- its numbers; ties of started_at_ms go by n, the order they were recorded in.
local id = int(params().id)
local stored = redis.call('HGETALL', job_key(id))
if #stored == 0 then return {} end
local run = {}
for i = 1, #stored, 2 do run[stored[i]] = stored[i + 1] end
local row = run_columns(id, run)
row.children_pending = row.children_pending or 0
row.children_count = redis.call('ZCARD', key('children', id))
local steps = {}
local recorded = redis.call('HGETALL', steps_key(id))
for i = 1, #recorded, 2 do
  local n, document = string.match(recorded[i + 1], '^(%d+)|(.*)$')
  local step = cjson.decode(document)
  local from = select(2, string.find(document, '"result":', 1, true)) + 1
  local to = string.find(document,
    ',"started_at_ms":[^"]*"finished_at_ms":[^"]*"wake_at_ms":[^"]*}$')
  step.name, step.result, step.n = recorded[i], string.sub(document, from, to - 1), tonumber(n)
  steps[#steps + 1] = step
end
table.sort(steps, function(a, b)
  if a.started_at_ms ~= b.started_at_ms then return a.started_at_ms < b.started_at_ms end
  return a.n < b.n
end)
for i, step in ipairs(steps) do steps[i] = cjson.encode(step) end
row.steps = '[' .. table.concat(steps, ',') .. ']'
return rows({row})
