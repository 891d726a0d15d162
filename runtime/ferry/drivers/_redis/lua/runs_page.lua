-- One bounded step of a run listing, newest first: walk index ARGV[1] (a sorted set of run
-- ids scored by id) downwards from below id ARGV[2] (opt) to above id ARGV[13] (opt),
-- examining at most ARGV[4] runs, keeping those that match the filter, at most ARGV[3].
-- Filter: queue, name, state, tenant (opt each), created after, created before (opt each),
-- ARGV[11] = "1" for running runs whose lease lapsed at or before ARGV[12] (now); the
-- search words: idempotency key prefix ARGV[14], last error code ARGV[15], text the last
-- error message holds ARGV[16] (ASCII letters in either case), due after ARGV[17] (opt
-- each), ARGV[18] "1"/"0" with or without a last error ("" either), and ARGV[19] = "1" to
-- answer each match's input (JSON text) too: an input search is decided by the caller,
-- by ferry.drivers._containment's rules, one step of candidates at a time.
-- Answers {matches (12 fields each, 13 with the input), the last id examined or false when
-- the walk ran out}. The caller picks the smallest index the filter allows and repeats
-- from the last id: each step is short, whatever the listing's length.
local index, below, limit, budget = ARGV[1], opt(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local queue, name, state, tenant = opt(ARGV[5]), opt(ARGV[6]), opt(ARGV[7]), opt(ARGV[8])
local after, before = opt(ARGV[9]), opt(ARGV[10])
local lapsed, now = ARGV[11] == '1', tonumber(ARGV[12])
local above = opt(ARGV[13])
local prefix, code, text = opt(ARGV[14]), opt(ARGV[15]), opt(ARGV[16])
local due_after, has_error, with_input = opt(ARGV[17]), opt(ARGV[18]), ARGV[19] == '1'
if text then text = string.lower(text) end
local top = below and ('(' .. below) or '+inf'
local bottom = above and ('(' .. above) or '-inf'
local ids = redis.call('ZREVRANGEBYSCORE', index, top, bottom, 'LIMIT', 0, budget)
local matches = {}
local SUMMARY = {'name', 'queue', 'state', 'attempts', 'max_attempts', 'tenant', 'run_at',
  'created', 'updated', 'err_code', 'err_msg', 'lease', 'key'}
for _, id in ipairs(ids) do
  local run = fields(id, SUMMARY)
  if run.state ~= nil
    and (queue == nil or run.queue == queue)
    and (name == nil or run.name == name)
    and (state == nil or run.state == state)
    and (tenant == nil or run.tenant == tenant)
    and (after == nil or tonumber(run.created) > tonumber(after))
    and (before == nil or tonumber(run.created) < tonumber(before))
    and (not lapsed or (run.state == 'running' and run.lease ~= nil
      and tonumber(run.lease) <= now))
    and (prefix == nil or string.sub(run.key, 1, #prefix) == prefix)
    and (code == nil or run.err_code == code)
    and (text == nil or (run.err_msg ~= nil
      and string.find(string.lower(run.err_msg), text, 1, true) ~= nil))
    and (due_after == nil or tonumber(run.run_at) > tonumber(due_after))
    and (has_error == nil or (run.err_code ~= nil) == (has_error == '1'))
  then
    local match = {id, run.name, run.queue, run.state, run.attempts,
      run.max_attempts, run.tenant or false, run.run_at, run.created, run.updated,
      run.err_code or false, run.err_msg or false}
    if with_input then table.insert(match, redis.call('HGET', job_key(id), 'payload')) end
    table.insert(matches, match)
    if #matches >= limit then return {matches, id} end
  end
end
if #ids < budget then return {matches, false} end
return {matches, ids[#ids]}
