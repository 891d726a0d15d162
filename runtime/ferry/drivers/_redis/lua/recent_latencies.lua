-- The ARGV[1] runs that most recently ended completed or dead, newest finish first (ties:
-- the later-enqueued run first). Each queue's two ended-run indexes are read from their
-- newest end, ARGV[1] at most each, then merged: the work follows ARGV[1], not the history.
-- Answers id, queue, name, state, finished, run_at per run.
local limit = tonumber(ARGV[1])
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
local answer = {}
for i = 1, math.min(limit, #pool) do
  local id = int(tonumber(pool[i].member))
  local run = fields(id, {'queue', 'name', 'run_at'})
  table.insert(answer, {id, run.queue, run.name, pool[i].state, int(pool[i].at), run.run_at})
end
return answer
