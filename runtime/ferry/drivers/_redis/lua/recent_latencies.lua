-- The p.limit runs that most recently ended completed or dead, newest finish first (ties:
-- the later-enqueued run first), with latency_ms = finished - run_at (never below 0), as
-- recent_latencies.sql answers them. Each queue's two ended-run indexes are read from
-- their newest end, p.limit at most each, then merged: the work follows p.limit, not the
-- history.
local limit = params().limit
if limit <= 0 then return {} end
local pool = {}
for _, queue in ipairs(redis.call('SMEMBERS', key('queues'))) do
  for _, state in ipairs({'completed', 'dead'}) do
    local newest = redis.call('ZREVRANGEBYSCORE', key('fin', state, queue), '+inf', '-inf',
      'WITHSCORES', 'LIMIT', 0, limit)
    for i = 1, #newest, 2 do
      table.insert(pool, {member = newest[i], at = tonumber(newest[i + 1]), state = state})
    end
  end
end
table.sort(pool, function(a, b)
  if a.at ~= b.at then return a.at > b.at end
  return a.member > b.member
end)
local found = {}
for i = 1, math.min(limit, #pool) do
  local id = int(tonumber(pool[i].member))
  local run = fields(id, {'queue', 'name', 'run_at'})
  found[i] = {id = id, queue = run.queue, name = run.name, state = pool[i].state,
    finished_at_ms = pool[i].at, latency_ms = math.max(pool[i].at - tonumber(run.run_at), 0)}
end
return rows(found)
