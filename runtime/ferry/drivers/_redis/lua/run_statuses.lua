-- Where runs ARGV[1..] stand (handle.status, handle.result, step.wait): per id, false
-- when no run has it, else its fields in the order of results.py's _STATUS.
local STATUS = {'name', 'state', 'attempts', 'max_attempts', 'pcur', 'ptot', 'result',
  'err_code', 'err_msg', 'finished', 'parent'}
local answer = {}
for i, id in ipairs(ARGV) do
  local values = redis.call('HMGET', job_key(id), unpack(STATUS))
  if values[2] then
    local row = {}
    for j = 1, #STATUS do row[j] = values[j] or false end
    answer[i] = row
  else
    answer[i] = false
  end
end
return answer
