-- Delete up to ARGV[2] runs in the states ARGV[3..] that finished before ARGV[1], with
-- their steps, their idempotency key (free again) and their index entries; answers how
-- many went. A child is kept while its parent has not ended: the parent's step.wait reads
-- its outcome (the walk steps over it). A queue left with no run and no pause is forgotten.
local cutoff, batch = ARGV[1], tonumber(ARGV[2])
local deleted = 0

local function kept(id)
  local parent = redis.call('HGET', job_key(id), 'parent')
  if not parent then return false end
  local state = redis.call('HGET', job_key(parent), 'state')
  return state ~= false and not ENDED[state]
end

for _, queue in ipairs(redis.call('SMEMBERS', key('queues'))) do
  for i = 3, #ARGV do
    local state = ARGV[i]
    local ended = key('fin', state, queue)
    local skipped = 0
    repeat
      local want = batch - deleted
      local doomed = redis.call('ZRANGEBYSCORE', ended, '-inf', '(' .. cutoff,
        'LIMIT', skipped, want)
      for _, member in ipairs(doomed) do
        local id = int(tonumber(member))
        if kept(id) then
          skipped = skipped + 1
        else
          forget(id, state, queue)
          redis.call('ZREM', ended, member)
          deleted = deleted + 1
        end
      end
    until #doomed < want or deleted >= batch
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
