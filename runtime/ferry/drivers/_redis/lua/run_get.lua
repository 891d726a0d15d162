-- Run p.id with every column `jobs show` reports, as run_get.sql answers it: its hash's
-- fields as columns, how many children it enqueued, and its steps in the order they ran (a
-- JSON array of lib.lua's run_steps rows, each step's result as JSON text).
local id = int(params().id)
local run = stored_run(id)
if next(run) == nil then return {} end
local row = run_columns(id, run)
row.children_pending = row.children_pending or 0
row.children_count = redis.call('ZCARD', key('children', id))
row.steps = '[' .. table.concat(run_steps(id), ',') .. ']'
return rows({row})
