-- The first p.limit children of run p.id (those it enqueued with step.enqueue), oldest
-- first, with the columns a list shows; a child pruned meanwhile is left out.
local p = params()
local found = {}
for _, child in ipairs(redis.call('ZRANGE', key('children', int(p.id)), 0, p.limit - 1)) do
  local run = fields(child, SUMMARY)
  if run.state then found[#found + 1] = run_columns(child, run) end
end
return rows(found)
