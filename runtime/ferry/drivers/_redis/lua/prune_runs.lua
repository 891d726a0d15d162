-- Prune's runs, as a function: prune_completed and prune_dead call it.

-- Delete up to p.batch runs in `states` that finished before p.before, with their steps,
-- their idempotency key (free again) and their index entries; a row per run deleted. A
-- child is kept while its parent has not ended: the parent's step.wait reads its outcome
-- (the walk steps over it). A queue left with no run and no pause is forgotten.
local function kept(id)
  local parent = redis.call('HGET', job_key(id), 'parent')
  if not parent then return false end
  local state = redis.call('HGET', job_key(parent), 'state')
  return state ~= false and not ENDED[state]
end

local function prune_runs(states)
  local p = params()
  local gone = 0
  for _, queue in ipairs(redis.call('SMEMBERS', key('queues'))) do
    for _, state in ipairs(states) do
      local ended = key('fin', state, queue)
      local skipped = 0
      repeat
        local want = p.batch - gone
        local doomed = redis.call('ZRANGEBYSCORE', ended, '-inf', '(' .. int(p.before),
          'LIMIT', skipped, want)
        for _, member in ipairs(doomed) do
          local id = int(tonumber(member))
          if kept(id) then
            skipped = skipped + 1
          else
            forget(id, state, queue)
            redis.call('ZREM', ended, member)
            gone = gone + 1
          end
        end
      until #doomed < want or gone >= p.batch
      if gone >= p.batch then return deleted(gone) end
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
  return deleted(gone)
end
