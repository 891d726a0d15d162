-- Every step runs p.job_ids have recorded, each run's in the order they ran (then in the
-- order they were recorded).
local found = {}
for _, job_id in ipairs(params().job_ids) do
  for _, step in ipairs(run_steps(int(job_id))) do found[#found + 1] = step end
end
return found
