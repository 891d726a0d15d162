-- Delete up to ARGV[2] runs in the states ARGV[3..] that finished before ARGV[1], with
-- their steps, their idempotency key (free again) and their index entries; answers how
-- many went. A queue left with no run and no pause is forgotten.
local cutoff, batch = ARGV[1], tonumber(ARGV[2])
local deleted = 0
for _, queue in ipairs(redis.call('SMEMBERS', key('queues'))) do
  for i = 3, #ARGV do
    local state = ARGV[i]
    local ended = key('fin', state, queue)
    local doomed = redis.call('ZRANGEBYSCORE', ended, '-inf', '(' .. cutoff,
      'LIMIT', 0, batch - deleted)
    for _, member in ipairs(doomed) do
      local id = int(tonumber(member))
      forget(id, state, queue)
      redis.call('ZREM', ended, member)
    end
    deleted = deleted + #doomed
    if deleted >= batch then return deleted end
  end
  local live = 0
  for _, count in ipairs(redis.call('HVALS', key('counts', queue))) do
    live = live + tonumber(count)
  end
  if live == 0 then
    redis.call('SREM', key('queues'), queue)
    redis.call('DEL', key('counts', queue))
  end
end
return deleted
