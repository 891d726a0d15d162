-- Every step runs p.job_ids have recorded, each run's in the order they ran (then in the
-- order they were recorded).
local p = params()
local found = {}
for _, job_id in ipairs(p.job_ids) do
  local id = int(job_id)
  local stored = redis.call('HGETALL', steps_key(id))
  local steps = {}
  for i = 1, #stored, 2 do
    local row, n = step_row(id, stored[i], stored[i + 1])
    steps[#steps + 1] = {row, n}
  end
  table.sort(steps, function(a, b)
    if a[1].started_at_ms ~= b[1].started_at_ms then return a[1].started_at_ms < b[1].started_at_ms end
    return a[2] < b[2]
  end)
  for _, step in ipairs(steps) do found[#found + 1] = step[1] end
end
return rows(found)
