-- Run counts per queue and state, plus every paused queue (with no state), as
-- queue_stats.sql answers them. The first row of a queue carries when its longest-waiting
-- due run (queued, run_at at or before p.now) became due, and how many runs are due: the
-- queue's claim index up to p.now (queued and sleeping runs; a lapsed lease a claim moved
-- back there counts too until a worker takes it over). A queue whose runs were all pruned
-- is left out (prune forgets it).
local now = int(params().now)
local found = {}
for _, queue in ipairs(redis.call('SMEMBERS', key('queues'))) do
  local counts = redis.call('HGETALL', key('counts', queue))
  local first = nil
  for i = 1, #counts, 2 do
    local runs = tonumber(counts[i + 1])
    if runs > 0 then
      local row = {queue = queue, state = counts[i], runs = runs, paused = 0, due = 0}
      found[#found + 1] = row
      first = first or row
    end
  end
  if first then
    local oldest = redis.call('ZRANGEBYSCORE', key('queued', queue), '-inf', now,
      'WITHSCORES', 'LIMIT', 0, 1)
    first.oldest_due_at_ms = tonumber(oldest[2])
    for _, member in ipairs(redis.call('SMEMBERS', key('groups', queue))) do
      local sep = string.find(member, ':', 1, true)
      local group = group_key(queue, string.sub(member, 1, sep - 1), string.sub(member, sep + 1))
      first.due = first.due + redis.call('ZCOUNT', group, '-inf', now)
    end
  end
end
for _, queue in ipairs(redis.call('SMEMBERS', key('paused'))) do
  found[#found + 1] = {queue = queue, runs = 0, paused = 1, due = 0}
end
return rows(found)
