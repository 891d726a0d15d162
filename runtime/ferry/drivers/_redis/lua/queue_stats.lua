-- Run counts per queue and state, whether each queue is paused, and when its longest-
-- waiting due run (queued, run_at at or before ARGV[1]) became due. Answers, per queue
-- with a run or a pause: queue, paused (1/0), oldest due (or false), then state, count
-- pairs. A queue whose runs were all pruned is left out (prune forgets it).
local now = ARGV[1]
local queues = redis.call('SUNION', key('queues'), key('paused'))
table.sort(queues)
local answer = {}
for _, queue in ipairs(queues) do
  local counts = redis.call('HGETALL', key('counts', queue))
  local total = 0
  for i = 2, #counts, 2 do total = total + tonumber(counts[i]) end
  local paused = redis.call('SISMEMBER', key('paused'), queue)
  if total > 0 or paused == 1 then
    local oldest = redis.call('ZRANGEBYSCORE', key('queued', queue), '-inf', now,
      'WITHSCORES', 'LIMIT', 0, 1)
    table.insert(answer, {queue, paused, oldest[2] or false, counts})
  end
end
return answer
