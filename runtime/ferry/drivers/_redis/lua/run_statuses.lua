-- Where runs p.ids stand (handle.status, handle.result, step.wait): a row per run found.
local p = params()
local found = {}
for _, n in ipairs(p.ids) do
  local run = fields(int(n), {'name', 'state', 'attempts', 'max_attempts', 'pcur', 'ptot',
    'result', 'err_code', 'err_msg', 'finished', 'parent'})
  if run.state then
    found[#found + 1] = {id = int(n), name = run.name, state = run.state,
      attempts = tonumber(run.attempts), max_attempts = tonumber(run.max_attempts),
      progress_current = tonumber(run.pcur), progress_total = tonumber(run.ptot),
      result = run.result, last_error_code = run.err_code, last_error_message = run.err_msg,
      finished_at_ms = tonumber(run.finished), parent_id = run.parent}
  end
end
return rows(found)
