-- One bounded step of a run listing, newest first: walk index ARGV[1] (a sorted set of run
-- ids scored by id) downwards from below id ARGV[2] (opt), examining at most ARGV[4] runs,
-- keeping those that match the filter, at most ARGV[3]. Filter: queue, name, state,
-- tenant (opt each), created after, created before (opt each), and ARGV[11] = "1" for
-- running runs whose lease lapsed at or before ARGV[12] (now).
-- Answers {matches (12 fields each), the last id examined or false when the index ran out}.
-- The caller picks the smallest index the filter allows and repeats from the last id:
-- each step is short, whatever the listing's length.
local index, below, limit, budget = ARGV[1], opt(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local queue, name, state, tenant = opt(ARGV[5]), opt(ARGV[6]), opt(ARGV[7]), opt(ARGV[8])
local after, before = opt(ARGV[9]), opt(ARGV[10])
local lapsed, now = ARGV[11] == '1', tonumber(ARGV[12])
local top = below and ('(' .. below) or '+inf'
local ids = redis.call('ZREVRANGEBYSCORE', index, top, '-inf', 'LIMIT', 0, budget)
local matches = {}
local SUMMARY = {'name', 'queue', 'state', 'attempts', 'max_attempts', 'tenant', 'run_at',
  'created', 'updated', 'err_code', 'err_msg', 'lease'}
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
  then
    table.insert(matches, {id, run.name, run.queue, run.state, run.attempts,
      run.max_attempts, run.tenant or false, run.run_at, run.created, run.updated,
      run.err_code or false, run.err_msg or false})
    if #matches >= limit then return {matches, id} end
  end
end
if #ids < budget then return {matches, false} end
return {matches, ids[#ids]}
