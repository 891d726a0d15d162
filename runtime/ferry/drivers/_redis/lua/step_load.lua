-- Every step runs p.job_ids have recorded, each run's in the order they ran (then in the
-- order they were recorded).
local p = params()
local found = {}
for _, job_id in ipairs(p.job_ids) do
  local id = int(job_id)
  local stored = redis.call('HGETALL', steps_key(id))
  local steps = {}
  for i = 1, #stored, 2 do steps[#steps + 1] = {step_row(id, stored[i], stored[i + 1])} end
  table.sort(steps, function(a, b) return a[2] < b[2] or (a[2] == b[2] and a[3] < b[3]) end)
  for _, step in ipairs(steps) do found[#found + 1] = step[1] end
end
return found
