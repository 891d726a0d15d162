-- Runs matching a filter, newest first, as runs_list.sql answers them and with its
-- parameters (each absent: no restriction), in one bounded step: the smallest index the
-- filter allows (every run's, a queue's, a job's, a state's or a tenant's: sorted sets by
-- id) is walked down from below p.before_id, LIST_STEP runs at most, keeping p.limit
-- matches at most. Its last row has no id: the id the walk stopped at (`walked_to`, absent
-- when the index ran out below it), where the store's next step starts. The idempotency
-- key is matched as starting with p.key_from (the prefix; p.key_below only bounds its
-- range in SQL). An input search is left to the store: each row of one carries its
-- `input`, and every run examined that matches the other words is one (cjson reads [] and
-- {} alike and numbers as doubles, so jsonb's rules cannot be followed here).
local LIST_STEP = 1000
local p = params()
if p.limit <= 0 then return rows({}) end
local state = p.state or (p.lease_expired and 'running' or nil)
local index, size = key('ix', 'all'), nil
for kind, value in pairs({q = p.queue, n = p.name, s = state, t = p.tenant}) do
  local count = redis.call('ZCARD', key('ix', kind, value))
  if size == nil or count < size then index, size = key('ix', kind, value), count end
end
local top = p.before_id and ('(' .. int(p.before_id)) or '+inf'
local bottom = p.after_id and ('(' .. int(p.after_id)) or '-inf'
local ids = redis.call('ZREVRANGEBYSCORE', index, top, bottom, 'LIMIT', 0, LIST_STEP)
local wanted = p.input_contains and LIST_STEP or p.limit
local text = p.error_text and string.lower(p.error_text)
local found = {}
local step = {walked_to = #ids == LIST_STEP and ids[#ids] or nil}
local WANTED = {'lease', 'key', unpack(SUMMARY)}
for _, id in ipairs(ids) do
  local run = fields(id, WANTED)
  if run.state ~= nil
    and (p.queue == nil or run.queue == p.queue)
    and (p.name == nil or run.name == p.name)
    and (state == nil or run.state == state)
    and (p.tenant == nil or run.tenant == p.tenant)
    and (p.created_after == nil or tonumber(run.created) > p.created_after)
    and (p.created_before == nil or tonumber(run.created) < p.created_before)
    and (not p.lease_expired or (run.state == 'running' and run.lease ~= nil
      and tonumber(run.lease) <= p.now))
    and (p.key_from == nil or string.sub(run.key, 1, #p.key_from) == p.key_from)
    and (p.error_code == nil or run.err_code == p.error_code)
    and (text == nil or (run.err_msg ~= nil
      and string.find(string.lower(run.err_msg), text, 1, true) ~= nil))
    and (p.due_after == nil or tonumber(run.run_at) > p.due_after)
    and (p.has_error == nil or (run.err_code ~= nil) == p.has_error)
  then
    local row = run_columns(id, run)
    if p.input_contains then row.input = redis.call('HGET', job_key(id), 'payload') end
    found[#found + 1] = row
    if #found == wanted then
      step.walked_to = id
      break
    end
  end
end
found[#found + 1] = step
return rows(found)
