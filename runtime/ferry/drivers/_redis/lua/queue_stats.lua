-- Run counts per queue and state, whether each queue is paused, when its longest-waiting
-- due run (queued, run_at at or before ARGV[1]) became due, and how many runs are due: the
-- queue's claim index up to ARGV[1] (queued and sleeping runs; a lapsed lease a claim moved
-- back there counts too until a worker takes it over). Answers, per queue with a run or a
-- pause: queue, paused (1/0), oldest due (or false), due, then state, count pairs. A queue
-- whose runs were all pruned is left out (prune forgets it).
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
    local due = 0
    for _, member in ipairs(redis.call('SMEMBERS', key('groups', queue))) do
      local sep = string.find(member, ':', 1, true)
      local group = group_key(queue, string.sub(member, 1, sep - 1), string.sub(member, sep + 1))
      due = due + redis.call('ZCOUNT', group, '-inf', now)
    end
    table.insert(answer, {queue, paused, oldest[2] or false, due, counts})
  end
end
return answer
